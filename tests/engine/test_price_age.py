"""The cohort's ``[prices]`` rules decide which prices are too old to use (defaults: 7 days in
replay snapshots and marks, 6 hours live)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.cohorts.config import parse_config
from arena.db.models import PortfolioSnapshotRow
from arena.engine.runtime.sources import open_source
from tests.engine.helpers import A, config, day, replay, script, tiny_dataset


def test_replay_snapshots_leave_out_prices_older_than_the_cohorts_limit(
    engine: Engine, tmp_path: Path
) -> None:
    dataset = tiny_dataset(tmp_path / "data")  # prices on days 0 and 7
    hold = [{"name": "h", "kind": "hold"}]
    default = open_source(parse_config(config(dataset, hold)), engine)
    strict = open_source(
        parse_config(config(dataset, hold, prices={"snapshot_max_age_replay": "2d"})), engine
    )
    assert len(default.snapshot(day(3)).entries) == 3
    assert strict.snapshot(day(1)).entries and not strict.snapshot(day(3)).entries


def test_marks_flag_positions_stale_past_the_cohorts_mark_max_age(engine: Engine, tmp_path: Path) -> None:
    bets = [{"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "amount": 100}]
    agent = {"name": "alice", "kind": "scripted", "path": str(script(tmp_path / "alice.jsonl", bets))}
    dataset = tiny_dataset(tmp_path / "data")  # A priced on days 0, 7 and 14

    def stale_on_day_3(**overrides: object) -> int:
        _, rt = replay(engine, config(dataset, [agent], **overrides))
        with Session(engine) as session:
            row = session.exec(
                select(PortfolioSnapshotRow).where(
                    PortfolioSnapshotRow.cohort_id == rt.cohort_id, PortfolioSnapshotRow.marked_at == day(3)
                )
            ).one()
        return row.stale_count

    assert stale_on_day_3() == 0
    assert stale_on_day_3(name="strict", prices={"mark_max_age": "2d"}) == 1
