"""``dashboard.warmup``: the first page's answers, computed before the first visit, handed once."""

from __future__ import annotations

from pathlib import Path

import pytest
from polars.testing import assert_frame_equal

from arena.db.engine import make_engine
from arena.reports import catalog
from arena.scoring import leaderboard, load_frames
from arena.scoring.load.database import cohort_scoring
from dashboard import warmup
from tests.dashboard.world import REPLAY


def _latest(url: str) -> tuple[tuple[str, ...], tuple[object, ...]]:
    """The latest cohort's id (as the page asks for it) and the database's data version."""
    engine = make_engine(url)
    with engine.connect() as connection:
        version = catalog.data_version(connection)
        latest = (str(catalog.cohorts(connection)["cohort_id"][0]),)
    engine.dispose()
    return latest, version


def test_the_latest_cohorts_frames_and_leaderboard_are_handed_over_once(world_url: str) -> None:
    warmup.warm(world_url)
    latest, version = _latest(world_url)
    engine = make_engine(world_url)
    with engine.connect() as connection:
        expected = load_frames(connection, list(latest))
        seed = cohort_scoring(connection, list(latest)).seed
    engine.dispose()
    assert latest == (REPLAY,)
    by = warmup.FIRST_RANKING
    warm = warmup.take("frames", world_url, latest, version)
    assert_frame_equal(warm.fills, expected.fills)
    assert_frame_equal(warm.prices, expected.prices)
    assert_frame_equal(
        warmup.take("scores", world_url, latest, version, by), leaderboard(expected, by=by, seed=seed)
    )
    assert warmup.take("frames", world_url, latest, version) is None  # handed over once: the page caches it


def _asked(kind: str, latest: tuple[str, ...], version: tuple[object, ...]) -> tuple[object, ...]:
    """The arguments the first page asks ``kind`` for: the latest cohort, ranked the default way."""
    return (latest, version, warmup.FIRST_RANKING) if kind == "scores" else (latest, version)


ASKED_INSTEAD = {  # what a first page may ask for instead of the warm answers' arguments
    "another ranking": ("scores", lambda latest, version: (latest, version, "brier")),
    "other cohorts": ("frames", lambda latest, version: ((REPLAY, "other"), version)),
    "newer data": ("frames", lambda latest, version: (latest, (*version, 1))),
}


@pytest.mark.parametrize("instead", ASKED_INSTEAD)
def test_a_first_ask_for_something_else_drops_that_kinds_warm_answer(world_url: str, instead: str) -> None:
    warmup.warm(world_url)
    latest, version = _latest(world_url)
    kind, arguments = ASKED_INSTEAD[instead]
    assert warmup.take(kind, world_url, *arguments(latest, version)) is None
    # The answer the page did not ask for first is gone: not kept for the server's life.
    assert warmup.take(kind, world_url, *_asked(kind, latest, version)) is None
    other = "frames" if kind == "scores" else "scores"
    assert warmup.take(other, world_url, *_asked(other, latest, version)) is not None  # still offered


def test_a_database_that_is_not_there_is_left_alone(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    warmup.warm(f"sqlite:///{missing}")
    assert not missing.exists()
