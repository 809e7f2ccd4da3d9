"""``dashboard.warmup``: the first page's answers, computed before the first visit, handed once."""

from __future__ import annotations

from pathlib import Path

from polars.testing import assert_frame_equal

from arena.db.engine import make_engine
from arena.reports import catalog
from arena.scoring import leaderboard, load_frames
from arena.scoring.load.database import cohort_scoring
from dashboard import warmup
from tests.dashboard.world import REPLAY


def test_the_latest_cohorts_frames_and_leaderboard_are_handed_over_once(world_url: str) -> None:
    warmup.warm(world_url)
    engine = make_engine(world_url)
    with engine.connect() as connection:
        version = catalog.data_version(connection)
        latest = (str(catalog.cohorts(connection)["cohort_id"][0]),)
        expected = load_frames(connection, list(latest))
        seed = cohort_scoring(connection, list(latest)).seed
    engine.dispose()
    assert latest == (REPLAY,)
    by = warmup.FIRST_RANKING
    assert warmup.take("scores", world_url, latest, version, "brier") is None  # not the default ranking
    assert warmup.take("frames", world_url, (REPLAY, "other"), version) is None  # not these cohorts
    assert warmup.take("frames", world_url, latest, (*version, 1)) is None  # the data moved since
    warm = warmup.take("frames", world_url, latest, version)
    assert_frame_equal(warm.fills, expected.fills)
    assert_frame_equal(warm.prices, expected.prices)
    assert_frame_equal(
        warmup.take("scores", world_url, latest, version, by), leaderboard(expected, by=by, seed=seed)
    )
    assert warmup.take("frames", world_url, latest, version) is None  # handed over once: the page caches it


def test_a_database_that_is_not_there_is_left_alone(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    warmup.warm(f"sqlite:///{missing}")
    assert not missing.exists()
