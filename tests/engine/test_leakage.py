"""The leakage guard keys on the Autocast rules' cutoff: 23:59:59 UTC of the day before the close."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import Engine

from arena.cohorts.config import parse_config
from arena.cohorts.leakage import allowed, excluded_markets, knowledge_ends, launch_warnings, market_cutoff
from arena.scoring import leaderboard, load_frames
from markets.replay import ReplaySource
from markets.types import Market, ResolutionKind, Venue
from tests.engine.helpers import A, B, C, config, day, launch_cohort, write_market_dataset

CLOSE = datetime(2022, 3, 23, 10, 19, tzinfo=UTC)  # the Autocast rules' own example


def _market(close: datetime | None) -> Market:
    return Market(Venue.POLYMARKET, "q", "?", close_time=close)


def _knows_until(day_: int) -> datetime:
    """End of the knowledge-cutoff day 2022-03-``day_``: the next midnight."""
    ends = knowledge_ends(f"2022-03-{day_:02d}")
    assert ends == datetime(2022, 3, day_, tzinfo=UTC) + timedelta(days=1)
    return ends


def test_the_market_cutoff_is_the_end_of_the_day_before_the_close() -> None:
    assert market_cutoff(_market(CLOSE), None) == datetime(2022, 3, 22, 23, 59, 59, tzinfo=UTC)
    # No close: the resolution date stands in; neither: nothing to judge by.
    resolved = datetime(2022, 3, 30, 8, tzinfo=UTC)
    assert market_cutoff(_market(None), resolved) == datetime(2022, 3, 29, 23, 59, 59, tzinfo=UTC)
    assert market_cutoff(_market(None), None) is None


def test_a_model_may_forecast_only_if_its_cutoff_day_is_before_the_close_date() -> None:
    # Knowledge to the end of Mar 22 (last instant 23:59:59) is exactly what the cutoff allows.
    assert allowed(_market(CLOSE), None, _knows_until(22))
    # To the end of Mar 23 it may have read about the close: not offered, though the market
    # resolves only later (the old guard, keyed on the resolution, would have offered it).
    assert not allowed(_market(CLOSE), datetime(2022, 4, 30, tzinfo=UTC), _knows_until(23))
    assert allowed(_market(None), None, _knows_until(30))


def test_the_guard_excludes_by_close_date_not_resolution(tmp_path: Path) -> None:
    """Day n is Jan n+1. A closes on day 10 (Jan 11) but resolves on day 19; B closes and resolves
    on day 9 (Jan 10); C closes on day 17. A cutoff of Jan 10 is not before B's close date: B
    goes; A's close date, Jan 11, is after it: A stays. A cutoff of Jan 11 excludes A too."""
    data = write_market_dataset(
        tmp_path / "data",
        {A: {0: "0.4"}, B: {0: "0.3"}, C: {0: "0.5"}},
        {A: (19, ResolutionKind.YES), B: (9, ResolutionKind.NO), C: (17, ResolutionKind.NO)},
        close_days={A: 10, B: 9, C: 17},
    )
    source = ReplaySource.from_directory(data)

    def excluded(cutoff: str) -> frozenset[str]:
        agent = {"name": "l", "kind": "llm", "model": "m", "knowledge_cutoff": cutoff}
        return excluded_markets(parse_config(config(data, [agent])), source)

    assert day(9).date().isoformat() == "2025-01-10"
    assert excluded("2025-01-09") == frozenset()  # B closes Jan 10: Jan 9 is before it
    assert excluded("2025-01-10") == {B}
    assert excluded("2025-01-11") == {A, B}  # A closes Jan 11, though it resolves only on Jan 20


def test_launch_warns_of_an_unguarded_llm_and_of_rounds_before_a_cutoff(
    engine: Engine, tmp_path: Path
) -> None:
    """Rounds every 7 days from Jan 1 (two of them: Jan 1 and Jan 8). ``early`` knows up to the
    end of Jan 5: the Jan 1 round is before that, Jan 8 is not. ``blind`` has no cutoff."""
    data = write_market_dataset(
        tmp_path / "data", {A: {0: "0.4", 7: "0.5"}}, {A: (19, ResolutionKind.YES)}, close_days={A: 19}
    )
    llm = {"kind": "llm", "model": "m", "base_url": "http://127.0.0.1:9", "api_key_env": "K"}
    agents = [
        {"name": "early", **llm, "knowledge_cutoff": "2025-01-05"},
        {"name": "blind", **llm},
        {"name": "h", "kind": "hold"},
    ]
    cfg = parse_config(config(data, agents))
    assert launch_warnings(cfg, [day(0), day(7)]) == [
        "leakage guard: off for blind (an LLM in a replay cohort without knowledge_cutoff: it may "
        "know how the markets resolved)",
        "leakage guard: 1 replay rounds of early fall before its knowledge cutoff (it may know what "
        "happened next); they are flagged",
    ]
    assert launch_warnings(cfg.model_copy(update={"mode": "live"}), [day(0)]) == []
    cohort_id, _ = launch_cohort(engine, config(data, agents), environ={"K": "secret"})

    rows = {
        r["agent"]: r
        for r in leaderboard(load_frames(engine, [cohort_id]), replicates=20).iter_rows(named=True)
    }
    assert (rows["blind"]["leakage_guard"], rows["early"]["leakage_guard"], rows["h"]["leakage_guard"]) == (
        "off",
        "on",
        None,
    )
