"""Pure parsing of Manifold API v0 payloads (LiteMarket, FullMarket, Bet) into markets.types.

Manifold times are Unix **milliseconds**. Only BINARY markets are taken: their ``probability`` is
the YES price and NO is its complement by construction of Manifold's binary market maker.
Resolutions: YES, NO, CANCEL (refund: VOID) and MKT (pays ``resolutionProbability``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from markets.http import PayloadError, amount, as_list, as_object, epoch_time, probability, require
from markets.types import NO, YES, Market, PriceSnapshot, Resolution, ResolutionKind, Undecided, Venue

PROB_SOURCE = "manifold-prob"
BETS_SOURCE = "manifold-bets"
CLOSED_SOURCE = "manifold-closed"  # an observation without prices: seen closed at this time
_HALF = Decimal("0.5")


def describe(payload: Mapping[str, Any]) -> str:
    return f"manifold market {payload.get('id')!r}"


def market_from_manifold(payload: Mapping[str, Any]) -> Market:
    """The arena's Market for a Manifold BINARY market; other types are refused by name."""
    where = describe(payload)
    kind = payload.get("outcomeType")
    if kind != "BINARY":
        raise PayloadError(f"{where}: outcomeType {kind!r} is not supported (BINARY markets only)")
    market_id = require(payload, "id", str, where=where)
    question = require(payload, "question", str, where=where).strip()
    if not market_id or not question:
        raise PayloadError(f"{where}: fields 'id' and 'question' must be non-empty")
    url = payload.get("url")
    return Market(
        venue=Venue.MANIFOLD,
        venue_id=market_id,
        question=question,
        description=_description(payload),
        open_time=epoch_time(payload.get("createdTime"), where=where, field="createdTime", millis=True),
        close_time=epoch_time(payload.get("closeTime"), where=where, field="closeTime", millis=True),
        volume=amount(payload.get("volume"), "volume", where=where),
        liquidity=amount(payload.get("totalLiquidity"), "totalLiquidity", where=where),
        url=url if isinstance(url, str) and url else None,
    )


def manifold_prices(payload: Mapping[str, Any], market: Market, observed_at: datetime) -> PriceSnapshot:
    """The market's ``probability`` as the YES price (NO = 1 − YES on a binary Manifold market)."""
    yes = probability(payload.get("probability"), where=describe(payload), field="probability")
    return PriceSnapshot(market.market_id, {YES: yes, NO: 1 - yes}, observed_at, PROB_SOURCE)


def is_open(payload: Mapping[str, Any], observed_at: datetime) -> bool:
    """Unresolved and before ``closeTime`` (Manifold has no separate closed flag)."""
    if _is_resolved(payload):
        return False
    close = epoch_time(payload.get("closeTime"), where=describe(payload), field="closeTime", millis=True)
    return close is None or close > observed_at


def manifold_resolution(
    payload: Mapping[str, Any], market: Market, observed_at: datetime
) -> Resolution | Undecided | None:
    """The final outcome if resolved; ``Undecided`` if closed but not resolved; None while open.

    MKT pays ``resolutionProbability`` per YES share. At exactly 0.5 that is a 50-50; any other
    MKT value needs proportional payouts, which the arena's resolution kinds cannot express yet,
    so it waits for a manual resolution rather than being rounded to something it is not.
    """
    where = describe(payload)
    if not _is_resolved(payload):
        return (
            None
            if is_open(payload, observed_at)
            else Undecided(market.market_id, "closed; awaiting resolution")
        )
    outcome = payload.get("resolution")
    resolved_at = (
        epoch_time(payload.get("resolutionTime"), where=where, field="resolutionTime", millis=True)
        or observed_at
    )
    simple = {"YES": ResolutionKind.YES, "NO": ResolutionKind.NO, "CANCEL": ResolutionKind.VOID}
    if outcome in simple:
        return Resolution.binary(market.market_id, simple[outcome], resolved_at, PROB_SOURCE)
    if outcome != "MKT":
        raise PayloadError(f"{where}: resolution must be YES, NO, MKT or CANCEL, got {outcome!r}")
    share = probability(payload.get("resolutionProbability"), where=where, field="resolutionProbability")
    if share == _HALF:
        return Resolution.binary(market.market_id, ResolutionKind.FIFTY_FIFTY, resolved_at, PROB_SOURCE)
    return Undecided(
        market.market_id, f"resolved MKT at {share}: proportional payouts need a manual resolution"
    )


def bet_history(payload: object, market_id: str) -> list[tuple[datetime, Decimal]]:
    """(time, probAfter) of every filled, uncancelled bet, oldest first: the market's price path.

    Unfilled limit orders do not move the price (their fills appear as other bets), so they are
    skipped. Manifold lists bets newest first; bets of the same millisecond keep their order.
    """
    where = f"manifold bets of {market_id!r}"
    points: list[tuple[datetime, Decimal]] = []
    for index, item in reversed(list(enumerate(as_list(payload, where=where)))):
        bet = as_object(item, where=f"{where}[{index}]")
        if bet.get("isCancelled") is True or bet.get("isFilled") is False:
            continue
        when = epoch_time(bet.get("createdTime"), where=where, field=f"[{index}].createdTime", millis=True)
        if when is None:
            raise PayloadError(f"{where}: bet [{index}] has no createdTime")
        points.append((when, probability(bet.get("probAfter"), where=where, field=f"[{index}].probAfter")))
    return sorted(points, key=lambda point: point[0])


def _is_resolved(payload: Mapping[str, Any]) -> bool:
    value = payload.get("isResolved")
    if not isinstance(value, bool):
        raise PayloadError(f"{describe(payload)}: field 'isResolved' must be a boolean, got {value!r}")
    return value


def _description(payload: Mapping[str, Any]) -> str:
    """FullMarket has ``textDescription`` (plain) and ``description`` (TipTap JSON or, in old data, text)."""
    for key in ("textDescription", "description"):
        value = payload.get(key)
        if isinstance(value, str):
            return value
    return ""
