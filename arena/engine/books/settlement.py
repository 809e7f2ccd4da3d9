"""Settlement: a resolution pays out every open position of the market, per cohort, atomically.

One transaction per (market, cohort) settles every agent holding the market, so a cohort never
shows one agent paid and another not. ``Ledger.settle`` is a no-op for a market already
settled, and the database allows one settlement fill per position, so re-running the job (or
two jobs at once) cannot pay twice. A resolution the ledger rejects (``SettlementRejected``, e.g.
a winner that is not one of the outcomes held) is deferred, logged, and listed by ``arena markets
pending``; any other error is a bug and propagates rather than posing as a data problem.

Settlement fills are computed once the holders' rows are locked, and stamped then
(``CohortRuntime.happened_at``: the real time live, the given time in a replay), for the reason
round fills are (``rounds.commit``): every mark then agrees with the fills up to its time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from arena.db.engine import session_scope
from arena.db.market_rows import resolution_row, write_resolutions
from arena.engine.runtime.cohort import AgentSlot, CohortRuntime
from arena.engine.store.ledger_store import (
    FillBatch,
    LedgerConflict,
    committed,
    lock_and_check,
    write_fill_batches,
)
from markets.types import Resolution
from portfolio import Fill, MarketId, SettlementRejected
from portfolio.units import outcome_prices

log = logging.getLogger("arena.engine.books.settlement")


@dataclass
class SettlementReport:
    settled: dict[str, int] = field(default_factory=dict)  # market id -> positions settled
    deferred: dict[str, str] = field(default_factory=dict)  # market id -> why


def settle(rt: CohortRuntime, resolutions: Iterable[Resolution], at: datetime) -> SettlementReport:
    """Apply each resolution to the cohort's agents that hold the market.

    The markets resolving together are settled in one transaction (``_settle_together``); when
    that cannot be done (a resolution a ledger rejects, a ledger another writer moved), nothing
    of it is kept and each market goes through its own transaction, which handles those cases.
    Who holds what is listed once per call, not per resolution and agent; a market's settlement
    changes (or reloads) only its holders' ledgers, so only theirs are listed again."""
    report = SettlementReport()
    held = {s.id: _held(s) for s in rt.agents}
    due = [
        (r, holders) for r in resolutions if (holders := [s for s in rt.agents if r.market_id in held[s.id]])
    ]
    if len(due) > 1 and _settle_together(rt, due, at, report):
        return report
    held = {s.id: _held(s) for s in rt.agents}
    for resolution, _ in due:
        holders = [s for s in rt.agents if resolution.market_id in held[s.id]]
        if holders:
            _settle_market(rt, resolution, holders, at, report)
            held |= {s.id: _held(rt.slot(s.id)) for s in holders}
    return report


def _settle_together(
    rt: CohortRuntime,
    due: list[tuple[Resolution, list[AgentSlot]]],
    at: datetime,
    report: SettlementReport,
) -> bool:
    """Settle every market of ``due`` in ONE transaction (fills in the order the markets come, as
    one transaction per market would store them). False, with the ledgers reloaded and nothing
    stored, when a ledger rejects a resolution or moved under us: ``_settle_market`` then takes
    the markets one at a time."""
    involved = sorted({s.id for _, holders in due for s in holders})
    try:
        with session_scope(rt.engine) as session:
            write_resolutions(session, [resolution_row(r, at, None) for r, _ in due], count=False)
            lock_and_check(session, [rt.slot(a).book for a in involved])
            filled_at = rt.happened_at(at)
            staged = [
                (r, holders, {s.id: _settle_one(s, r, filled_at) for s in holders}) for r, holders in due
            ]
            batches = [
                FillBatch(s.book, fills[s.id], decision_id=None) for _, hs, fills in staged for s in hs
            ]
            write_fill_batches(session, batches, at=filled_at)
    except (SettlementRejected, LedgerConflict):
        rt.reload(involved)
        return False
    except BaseException:
        rt.reload(involved)
        raise
    for resolution, holders, fills in staged:
        for slot in holders:
            committed(slot.book, fills[slot.id])
        report.settled[resolution.market_id] = sum(len(f) for f in fills.values())
    return True


def _held(slot: AgentSlot) -> frozenset[MarketId]:
    return slot.book.ledger.open_markets()


def record_later_resolutions(rt: CohortRuntime, resolutions: list[Resolution]) -> None:
    """Store resolutions a replay reaches only after its cohort completed, each stamped as detected
    at its own time (the dataset knows it): stated forecasts are scored against every resolution
    the data holds, so no agent's score depends on how long other agents kept the cohort open."""
    if resolutions:
        with session_scope(rt.engine) as session:
            write_resolutions(
                session, [resolution_row(r, r.resolved_at, None) for r in resolutions], count=False
            )


def _holds(slot: AgentSlot, market_id: str) -> bool:
    return MarketId(market_id) in slot.book.ledger.open_markets()


def _settle_market(
    rt: CohortRuntime,
    resolution: Resolution,
    holders: list[AgentSlot],
    at: datetime,
    report: SettlementReport,
) -> None:
    for attempt in (1, 2):
        try:
            with session_scope(rt.engine) as session:
                write_resolutions(session, [resolution_row(resolution, at, None)], count=False)
                lock_and_check(session, [s.book for s in holders])
                filled_at = rt.happened_at(at)
                fills = {s.id: _settle_one(s, resolution, filled_at) for s in holders}
                batches = [FillBatch(s.book, fills[s.id], decision_id=None) for s in holders]
                write_fill_batches(session, batches, at=filled_at)  # every holder's fills in one INSERT
        except SettlementRejected as exc:
            rt.reload([s.id for s in holders])
            report.deferred[resolution.market_id] = str(exc)
            log.warning("deferred settlement of %s in cohort %s: %s", resolution.market_id, rt.cohort_id, exc)
            return
        except LedgerConflict:
            rt.reload([s.id for s in holders])
            holders = [s for s in holders if _holds(s, resolution.market_id)]
            if not holders:
                return  # another runner settled it meanwhile
            if attempt == 2:
                raise
            continue
        except BaseException:
            rt.reload([s.id for s in holders])
            raise
        for slot in holders:
            committed(slot.book, fills[slot.id])
        report.settled[resolution.market_id] = sum(len(f) for f in fills.values())
        return


def _settle_one(slot: AgentSlot, resolution: Resolution, at: datetime) -> list[Fill]:
    payouts = outcome_prices(resolution.payouts)
    return slot.book.ledger.settle(MarketId(resolution.market_id), payouts, at, void=resolution.is_void)
