"""The writing step of a sync: its observations into the database, in batches, only what is new.

What is new (a changed market row, a moved price or a heartbeat, a first resolution) is step 3 of
``arena.sync.run``. Each batch is one transaction, and counts reach the report once it committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.db.engine import session_scope
from arena.db.market_rows import (
    Stored,
    load_stored,
    market_row,
    resolution_row,
    snapshot_row,
    write_markets,
    write_resolutions,
    write_snapshots,
)
from arena.sync.outcomes import same_outcome, venue_answer, write_venue_answers
from arena.sync.types import Observation, Progress, SyncReport, SyncSettings
from arena.sync.unchanged import write_stamps
from markets.bounded import kept_json
from markets.types import PriceSnapshot


def write_observations(
    engine: Engine,
    observations: list[Observation],
    now: datetime,
    settings: SyncSettings,
    report: SyncReport,
    progress: Progress,
) -> None:
    """Write a sync's observations in batches, counting what was written in ``report``.

    A batch that fails is written again market by market, so one bad row (say, a raw payload the
    database refuses) costs that market alone, named in a problem line.
    """
    progress.stage("writing", len(observations))
    for start in range(0, len(observations), settings.write_batch):
        batch = observations[start : start + settings.write_batch]
        failure = _write_batch(engine, batch, now, settings, report)
        if failure is not None and len(batch) > 1:
            failures = [(obs, _write_batch(engine, [obs], now, settings, report)) for obs in batch]
        else:
            failures = [(batch[0], failure)]
        for obs, reason in failures:
            if reason is not None:
                report.problem(obs.market.market_id, f"not written: {reason}")
        progress.advance(len(batch))


def _write_batch(
    engine: Engine, batch: list[Observation], now: datetime, settings: SyncSettings, report: SyncReport
) -> str | None:
    """One transaction for ``batch``; counts reach the report only once it committed. Returns why
    it failed (one line), or None."""
    try:
        with session_scope(engine) as session:
            stored = load_stored(session, [o.market.market_id for o in batch])
            markets, snapshots, history, resolutions = _rows(batch, stored, now, settings)
            written = (
                write_markets(session, markets),
                write_snapshots(session, snapshots),
                write_snapshots(session, history),
                write_resolutions(session, resolutions),
            )
            rewritten = {row["id"] for row in markets}
            write_stamps(session, _new_stamps(batch, stored, rewritten))
            found = {o.market.market_id: o.resolution for o in batch if o.resolution is not None}
            overrides = {m: s.override for m, s in stored.items() if s.override is not None and m in found}
            write_venue_answers(session, {m: venue_answer(found[m], now) for m in overrides})
    except (SQLAlchemyError, ValueError) as exc:
        cause = getattr(exc, "orig", None) or exc  # the driver's reason, not the statement and rows
        return str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    report.markets_written += written[0]
    report.snapshots_written += written[1]
    report.history_written += written[2]
    report.resolutions_written += written[3]
    for market_id, override in overrides.items():
        if not same_outcome(override, found[market_id]):
            report.contradiction(market_id, override, found[market_id])
    return None


def _new_stamps(
    batch: list[Observation], stored: Mapping[str, Stored], rewritten: set[str]
) -> dict[str, str]:
    """Stamps to store on market rows that are not rewritten (a rewrite carries its stamp)."""
    return {
        o.market.market_id: o.stamp
        for o in batch
        if o.stamp
        and o.market.market_id not in rewritten
        and (previous := stored.get(o.market.market_id)) is not None
        and previous.stamp != o.stamp
    }


def _rows(
    batch: list[Observation], stored: Mapping[str, Stored], now: datetime, settings: SyncSettings
) -> tuple[list[dict[str, Any]], ...]:
    markets, snapshots, history, resolutions = [], [], [], []
    kept = partial(kept_json, limit=settings.raw_kept_bytes)  # a raw payload past it: size and sha256
    for obs in batch:
        previous = stored.get(obs.market.market_id)
        status = obs.status if obs.status is not None or previous is None else previous.row["venue_status"]
        row = market_row(obs.market, {}, now, status=status)
        if previous is None or any(row[c] != previous.row[c] for c in previous.row):
            markets.append({**row, "raw_json": kept(dict(obs.raw)), "sync_stamp": obs.stamp or None})
        latest = previous.latest if previous else {}
        snapshots += [
            snapshot_row(s, kept(raw)) for s, raw in obs.snapshots if _worth_writing(s, latest, settings)
        ]
        history += [snapshot_row(s, None) for s in obs.history]
        if obs.resolution is not None and not (previous and previous.resolved):
            resolutions.append(resolution_row(obs.resolution, now, kept(dict(obs.raw))))
    return markets, snapshots, history, resolutions


def _worth_writing(
    snapshot: PriceSnapshot, latest: Mapping[str, PriceSnapshot], settings: SyncSettings
) -> bool:
    """New information: the first of its source, changed prices, or a heartbeat after ``refresh_after``."""
    before = latest.get(snapshot.source)
    if before is None:
        return True
    if snapshot.observed_at <= before.observed_at or not (snapshot.prices or before.prices):
        return False  # nothing newer, or a "seen closed" observation repeated
    same = (
        dict(snapshot.prices) == dict(before.prices)
        and dict(snapshot.bids) == dict(before.bids)
        and dict(snapshot.asks) == dict(before.asks)
    )
    return not same or snapshot.observed_at - before.observed_at >= settings.refresh_after
