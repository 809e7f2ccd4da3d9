"""Frame contracts: bad input gets a one-line error naming frame, row, column and what was expected."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

import polars as pl
import pytest

from arena.scoring.load.frame_spec import FrameError
from arena.scoring.load.frames import FILLS, ScoringFrames
from tests.scoring.builders import build, buy, day, mark, price, resolution, seat, statement


def test_missing_column() -> None:
    frame = pl.DataFrame([buy("a", "polymarket:m", "YES", "100", 0.5)]).drop("price")
    with pytest.raises(FrameError, match=r"^fills: missing column\(s\) price$"):
        FILLS.conform(frame)


def test_null_where_a_value_is_required() -> None:
    rows = [seat("a"), {**seat("b"), "bankroll": None}]
    with pytest.raises(FrameError, match=r"^agents row 1: bankroll must be a value, got None$"):
        build(agents=rows)


def test_row_checks_name_the_row() -> None:
    with pytest.raises(FrameError, match=r"fills row 1: amount must be in \(0, max_bet\] on a buy"):
        build(
            agents=[seat("a")],
            fills=[buy("a", "polymarket:m", "YES", "100", 0.5), buy("a", "polymarket:m", "YES", "3000", 0.5)],
        )
    with pytest.raises(FrameError, match=r"forecasts row 0: p must be a probability in \[0, 1\], got 1.2"):
        build(agents=[seat("a")], forecasts=[statement("a", "polymarket:m", 1.2, day(0))])
    with pytest.raises(FrameError, match=r"resolutions row 0: winner must be the kind for YES/NO"):
        build(resolutions=[resolution("polymarket:m", "YES", winner="NO")])
    with pytest.raises(FrameError, match=r"fills row 0: kind must be one of buy, sell, settle, got 'short'"):
        build(agents=[seat("a")], fills=[{**buy("a", "polymarket:m", "YES", "1", 0.5), "kind": "short"}])


def test_wrong_types_and_naive_times() -> None:
    with pytest.raises(FrameError, match=r"^prices\.price: expected Float64, got String"):
        ScoringFrames.of(prices=pl.DataFrame([{**price("polymarket:m", day(0), 0.5), "price": "half"}]))
    fine = pl.DataFrame([seat("a")]).with_columns(
        pl.Series("bankroll", [Decimal("0.0000001")], pl.Decimal(38, 7))
    )
    with pytest.raises(
        FrameError, match=r"^agents\.bankroll: more decimal places than Decimal\(precision=38, scale=6\)"
    ):
        ScoringFrames.of(agents=fine)
    naive = pl.DataFrame([{**resolution("polymarket:m", "YES"), "resolved_at": datetime(2025, 1, 1)}])
    with pytest.raises(
        FrameError, match=r"^resolutions\.resolved_at: expected UTC times, got naive datetimes$"
    ):
        ScoringFrames.of(resolutions=naive)


def test_duplicates_unknown_frames_and_stray_agents() -> None:
    twice = statement("a", "polymarket:m", 0.5, day(0))
    with pytest.raises(FrameError, match=r"forecasts: rows must be unique on \(cohort_id, agent, market_id"):
        build(agents=[seat("a")], forecasts=[twice, twice])
    with pytest.raises(FrameError, match="unknown scoring frame"):
        ScoringFrames.of(trades=pl.DataFrame())
    with pytest.raises(FrameError, match=r"^snapshots: agent 'ghost' of cohort 'c1' is not in agents$"):
        build(agents=[seat("a")], snapshots=[mark("ghost", day(0), "10000")])


def test_as_of_and_cohort_selection() -> None:
    frames = build(
        agents=[seat("a"), seat("b", cohort="c2")],
        fills=[
            buy("a", "polymarket:m", "YES", "100", 0.5, at=day(1)),
            buy("b", "polymarket:m", "NO", "100", 0.5, cohort="c2"),
        ],
        resolutions=[resolution("polymarket:m", "YES", at=day(3))],
        prices=[price("polymarket:m", day(0), 0.5), price("polymarket:m", day(2), 0.6)],
    )
    earlier = frames.as_of(day(2))
    assert (len(earlier.fills), len(earlier.resolutions), len(earlier.prices)) == (2, 0, 2)
    assert len(frames.as_of(day(0)).fills) == 1
    only_c2 = frames.cohorts(["c2"])
    assert only_c2.agents["agent"].to_list() == ["b"]
    assert (len(only_c2.fills), len(only_c2.resolutions), len(only_c2.prices)) == (1, 1, 2)
    with pytest.raises(ValueError, match="naive datetime"):
        frames.as_of(datetime(2025, 1, 2))
