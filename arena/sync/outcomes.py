"""What a venue says of a market's outcome, in words, and its answer beside an operator's override.

``MarketRow.venue_status`` is ``TRADING``, the reason the outcome is not final yet, or
``resolved`` and the outcome (``describe``). A market an operator resolved keeps being synced
until the venue gives its own final answer, which is stored beside the override
(``venue_answer``); when the two do not pay the same (``same_outcome``), the sync reports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col

from arena.db.market_rows import OPERATOR
from arena.db.models import ResolutionRow
from arena.db.types import decimals_to_json
from markets.types import Resolution, ResolutionKind

TRADING = "trading"  # ``MarketRow.venue_status`` of a market the venue still trades


def describe(resolution: Resolution) -> str:
    """A resolution in a few words: ``YES``, ``VOID``, ``5050``, or the winning outcome's name."""
    if resolution.kind is not ResolutionKind.OUTCOME:
        return resolution.kind.value
    winners = [o for o, paid in resolution.payouts.items() if paid == 1]
    return repr(winners[0]) if len(winners) == 1 else str(dict(resolution.payouts))


def same_outcome(a: Resolution, b: Resolution) -> bool:
    """Whether two resolutions pay the same (kind and payouts; times and sources aside)."""
    return a.kind is b.kind and dict(a.payouts) == dict(b.payouts)


def venue_answer(resolution: Resolution, seen_at: datetime) -> dict[str, Any]:
    """``resolution.venue_answer_json``: the venue's own final answer, as a sync saw it."""
    return {
        "kind": resolution.kind.value,
        "payouts": decimals_to_json(resolution.payouts),
        "resolved_at": resolution.resolved_at.isoformat(),
        "seen_at": seen_at.isoformat(),
    }


def write_venue_answers(session: Session, answers: Mapping[str, dict[str, Any]]) -> None:
    """Store the venue's answer (``venue_answer``) on each market's resolution set by hand."""
    for market_id, answer in answers.items():
        session.execute(
            sa.update(ResolutionRow)
            .where(col(ResolutionRow.market_id) == market_id, col(ResolutionRow.source) == OPERATOR)
            .values(venue_answer_json=answer)
        )
