"""Cohorts replayed on the same six markets, for `arena compare` and the "Compare cohorts" page.

Each cohort is launched and replayed through the CLI (``arena replay CONFIG``), as a user would:

- ``reference``: ``s`` (scripted) bets $100 on YES of every market and states P(YES) at a distance
  ``d`` from the outcome, a different ``d`` on each market; ``random`` (seed 1); ``kelly``.
- ``shifted``: the same bets, but stated at a distance ``sqrt(d² + C)``: its Brier on every market
  is the reference's plus the same constant, while the reference's own Brier varies by market;
  ``random`` (seed 2).
- ``renamed``: the reference's script under another name, ``t`` (the same model identity).
- ``one-market``: ``s`` bets and states on the first market only.
- ``idle``: ``hold`` alone, which touches no market.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app
from markets.types import ResolutionKind
from tests.engine.helpers import D0, script, write_market_dataset

MARKETS = tuple(f"polymarket:m{i}" for i in range(6))
YES_WINS = (True, False, True, False, True, False)
DISTANCES = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)  # |stated P(YES) − outcome| in the reference
C = 0.1
COHORTS = ("reference", "shifted", "renamed", "one-market", "idle")


def _dataset(directory: Path) -> Path:
    series = {m: {0: "0.50", 7: "0.50"} for m in MARKETS}
    ends = {
        m: (9 + i, ResolutionKind.YES if yes else ResolutionKind.NO)
        for i, (m, yes) in enumerate(zip(MARKETS, YES_WINS, strict=True))
    }
    return write_market_dataset(directory, series, ends, close_days={m: 9 + i for i, m in enumerate(MARKETS)})


def _script(path: Path, distances: list[float], markets: tuple[str, ...] = MARKETS) -> Path:
    at = f"{D0:%Y-%m-%dT%H:%M:%SZ}"
    lines = []
    for market, distance in zip(markets, distances, strict=False):
        yes = YES_WINS[MARKETS.index(market)]
        p = 1 - distance if yes else distance
        lines.append({"time": at, "market_id": market, "outcome": "YES", "amount": 100, "probability": p})
    return script(path, lines)


def _config(folder: Path, name: str, dataset: Path, agents: str, seed: int = 0) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\ndataset = "{dataset}"\nstart = {D0:%Y-%m-%dT%H:%M:%SZ}\nseed = {seed}\n'
        '[schedule]\nevery = "7d"\nrounds = 2\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
        "[tournament]\nhidden_fraction = 0\n" + agents,
        encoding="utf-8",
    )
    return path


def scripted(name: str, path: Path) -> str:
    return f'[[agents]]\nname = "{name}"\nkind = "scripted"\npath = "{path}"\n'


def replayed(head: Path, folder: Path) -> tuple[str, dict[str, str]]:
    """A copy of the ``head`` database in ``folder`` with the five cohorts replayed: its URL and
    the cohorts' ids."""
    shutil.copyfile(head, folder / "arena.db")
    url = f"sqlite:///{folder / 'arena.db'}"
    return url, build(folder, url)


def build(folder: Path, database_url: str) -> dict[str, str]:
    """Replay the five cohorts into ``database_url``; their ids by ``COHORTS`` name."""
    dataset = _dataset(folder / "data")
    reference = _script(folder / "reference.jsonl", list(DISTANCES))
    shifted = _script(folder / "shifted.jsonl", [math.sqrt(d * d + C) for d in DISTANCES])
    first = _script(folder / "first.jsonl", [DISTANCES[0]], MARKETS[:1])
    agents = {
        "reference": scripted("s", reference) + '[[agents]]\nname = "random"\nkind = "random"\n'
        '[[agents]]\nname = "kelly"\nkind = "kelly"\n',
        "shifted": scripted("s", shifted) + '[[agents]]\nname = "random"\nkind = "random"\n',
        "renamed": scripted("t", reference),
        "one-market": scripted("s", first),
        "idle": '[[agents]]\nname = "hold"\nkind = "hold"\n',
    }
    ids = {}
    for seed, name in enumerate(COHORTS, start=1):
        config = _config(folder, name, dataset, agents[name], seed)
        result = CliRunner().invoke(app, ["replay", str(config), "--database-url", database_url])
        assert result.exit_code == 0, result.output
        listed = CliRunner().invoke(app, ["cohort", "list", "--json", "--database-url", database_url])
        ids[name] = next(c["id"] for c in json.loads(listed.stdout) if c["name"] == name)
    return ids
