"""The gauntlet cohort: the demo's config (bundled dataset, weekly rounds, its universe and rules)
with the demo's baselines and the gauntlet's strategies seated beside them, replayed through
``arena replay`` exactly as a user runs it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from arena.cli import app
from arena.commands.demo import DEMO_CONFIG
from tests.gauntlet import strategies as s

POSITIVE = "informed"
# negative control -> the metrics it is built to game
NEGATIVE: dict[str, tuple[str, ...]] = {
    "copier": ("tournament_take", "tournament_score", "stated_brier_imputed", "log_score_imputed"),
    "silent": ("stated_brier_imputed", "log_score_imputed"),
    "sure-thing": ("stated_brier", "log_score", "stated_brier_imputed"),
    "cherry-picker": ("stated_brier", "log_score"),
    "longshot-dust": ("brier", "bss_market", "brier_kelly"),
    "hidden-copier": ("tournament_take", "tournament_score"),
    # every closed-market leg is refused at the source (test_the_closed_market_trader_...); what it
    # earns is its honest favourite bets on open markets, which the return ranks as betting
    "closed-trader": (),
    "favourite-dust": ("brier_kelly",),
}
STRATEGIES = [
    s.plugin(POSITIVE, s.Informed),
    s.plugin("copier", s.Copier),
    s.plugin("silent", s.Silent),
    s.plugin("sure-thing", s.SureThing),
    s.plugin("cherry-picker", s.CherryPicker),
    s.plugin("longshot-dust", s.LongshotDust),
    s.plugin("hidden-copier", s.HiddenCopier),
    s.plugin("closed-trader", s.ClosedTrader),
    s.plugin("favourite-dust", s.FavouriteDust),
]


def gauntlet_config(directory: Path) -> Path:
    """Write the gauntlet's cohort config (TOML) into ``directory``; its path."""
    data: dict[str, Any] = tomllib.loads(DEMO_CONFIG.read_text(encoding="utf-8"))
    data["name"] = "gauntlet"
    data["agents"] = [*data["agents"], *STRATEGIES]
    path = directory / "gauntlet.toml"
    path.write_text(_toml(data), encoding="utf-8")
    return path


def replay_gauntlet(directory: Path) -> str:
    """Replay the gauntlet into a new SQLite database in ``directory``; its URL."""
    url = f"sqlite:///{directory / 'arena.db'}"
    done = CliRunner().invoke(app, ["replay", str(gauntlet_config(directory)), "--database-url", url])
    assert done.exit_code == 0, done.output
    return url


def _toml(data: dict[str, Any]) -> str:
    """The few TOML shapes the config uses: scalars, tables of scalars, arrays of tables."""
    lines = [f"{k} = {_value(v)}" for k, v in data.items() if not isinstance(v, dict | list)]
    for key, table in data.items():
        if isinstance(table, dict):
            lines += [f"\n[{key}]", *(f"{k} = {_value(v)}" for k, v in table.items())]
    for entry in data["agents"]:
        lines += ["\n[[agents]]", *(f"{k} = {_value(v)}" for k, v in entry.items())]
    return "\n".join(lines) + "\n"


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if hasattr(value, "isoformat"):
        return value.isoformat().replace("+00:00", "Z")
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
