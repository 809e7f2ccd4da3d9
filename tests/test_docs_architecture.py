"""Every code name in docs/architecture.md and docs/references.md resolves: a rename breaks this test.

A name is a dotted path in backticks that starts with one of the repository's packages
(``arena.engine.rounds.run.run_round``, ``portfolio.ledger.Ledger.apply_decision``); it
resolves when its longest importable prefix is a module and the rest is an attribute chain on it.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGES = ("docs/architecture.md", "docs/references.md")
CODE_NAME = re.compile(r"`((?:arena|agents|markets|portfolio|dashboard)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
# The steps of "The life of a round" name the function that does each one.
ROUND_STEPS = (
    "arena.engine.replay.runner.ReplayRunner.run",
    "arena.engine.live.jobs.rounds_job",
    "arena.engine.rounds.run.run_round",
    "arena.engine.rounds.run.round_snapshot",
    "arena.engine.rounds.universe.select_universe",
    "arena.engine.store.claims.claim_round",
    "arena.engine.rounds.asking.ask_all",
    "arena.engine.rounds.decisions.execute",
    "arena.engine.runtime.quotes.build_quotes",
    "arena.engine.rounds.commit.store_phase",
    "arena.engine.books.marks.persist_marks",
    "arena.engine.books.settlement.settle",
    "arena.scoring.load.database.load_frames",
    "arena.scoring.board.ranking.leaderboard",
    "arena.scoring.metrics.registry.METRICS",
    "portfolio.metrics.return_pct",
)


def code_names(text: str) -> list[str]:
    """The dotted code names in backticks in ``text``, in order, each once."""
    return list(dict.fromkeys(CODE_NAME.findall(text)))


def resolve(name: str) -> object:
    """The object ``name`` names: its longest importable module prefix, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is None or not ".".join(parts[:cut]).startswith(exc.name):
                raise  # the module exists but imports something missing: a real error
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(name)


def test_code_names_are_found_in_backticks_only() -> None:
    text = "`arena.engine.rounds.run.run_round` and arena.db but `numpy.mean`, `portfolio`, `x.arena.y`"
    assert code_names(text) == ["arena.engine.rounds.run.run_round"]


def test_resolve_fails_on_a_renamed_name() -> None:
    assert resolve("portfolio.metrics.return_pct").__name__ == "return_pct"  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        resolve("portfolio.metrics.return_percent")
    with pytest.raises((ImportError, AttributeError)):
        resolve("arena.engine.no_such_module.run")


@pytest.mark.parametrize("page", PAGES)
def test_every_code_name_on_the_page_resolves(page: str) -> None:
    names = code_names((REPO / page).read_text(encoding="utf-8"))
    assert len(names) >= 10, f"{page}: expected the page to name its code"
    broken = []
    for name in names:
        try:
            resolve(name)
        except (ImportError, AttributeError) as exc:
            broken.append(f"{name}: {type(exc).__name__}: {exc}")
    assert broken == []


def test_the_life_of_a_round_names_each_step() -> None:
    text = (REPO / "docs/architecture.md").read_text(encoding="utf-8")
    section = text.split("## The life of a round", 1)[1].split("\n## ", 1)[0]
    named = code_names(section)
    assert [s for s in ROUND_STEPS if s not in named] == []
    positions = [named.index(s) for s in ROUND_STEPS if s.startswith("arena.engine.rounds")]
    assert positions == sorted(positions), "the round's steps are listed in the order they run"
