"""Rounds with nothing to trade are recorded as *empty*, and nobody is asked.

A live round whose snapshot offers no market (the sync stopped, so every price is older than
``prices.snapshot_max_age_live``; or the universe filters keep none of the open markets) would
still ask every model, and pay for it, to answer about nothing. So a round that offers no market,
while no agent holds a position it could sell at the round's prices, is stored with status
``empty``, its snapshot (none) and the reason in ``round.note``; it asks no agent and has no
decisions. The rounds job's message counts such rounds and gives the reason; ``arena cohort
show`` lists them.

Replays are left as they are: their data is fixed, a round without markets there is part of what
was recorded, and a replay's decisions (a hold in every round) stay what earlier runs of the same
config stored. A round found already asked (decisions stored by an earlier, interrupted run) is
finished as usual, never turned empty.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import update
from sqlmodel import col, select

from arena.core.config_types import format_duration
from arena.db.engine import session_scope
from arena.db.models import DecisionRow, RoundRow
from arena.engine.rounds.report import RoundReport
from arena.engine.runtime.cohort import CohortRuntime
from arena.engine.store.round_store import open_round
from markets.types import MarketSnapshot

EMPTY = "empty"


def nothing_to_trade(rt: CohortRuntime, full: MarketSnapshot, universe: MarketSnapshot) -> str | None:
    """Why the live round at ``universe.as_of`` offers nothing to trade, or None when it does (or
    is a replay's): a market offered, or a position an agent could sell (its market in ``full``,
    the tradable snapshot)."""
    if universe.entries or rt.config.mode != "live":
        return None
    tradable = full.by_id()
    if any(m in tradable for slot in rt.agents for m in slot.book.ledger.open_markets()):
        return None
    if full.entries:
        return (
            f"offered no market: none of the {len(full.entries)} open markets with a price passed the "
            "cohort's universe filters, and no agent holds one"
        )
    age = format_duration(rt.config.prices.snapshot_max_age_live)
    return (
        f"offered no market: no synced market had a price observed within "
        f"prices.snapshot_max_age_live ({age}) before the round's time; is the sync job running?"
    )


def record_empty(
    rt: CohortRuntime, index: int, at: datetime, universe: MarketSnapshot, reason: str
) -> RoundReport | None:
    """Store round ``index`` (or the one an earlier run opened) as empty with ``reason``; None,
    storing nothing, when an earlier run already asked it (it has decisions)."""
    now = rt.happened_at(at)
    with session_scope(rt.engine) as session:
        round_id = open_round(session, rt.cohort_id, index, at, universe, started_at=now)
        asked = session.exec(select(DecisionRow.id).where(DecisionRow.round_id == round_id).limit(1)).first()
        if asked is not None:
            return None
        session.execute(
            update(RoundRow)
            .where(col(RoundRow.id) == round_id, col(RoundRow.status) == "running")
            .values(status=EMPTY, note=reason, finished_at=now)
        )
    return RoundReport(round_index=index, at=at, status=EMPTY, market_count=0, note=reason)
