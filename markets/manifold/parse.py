"""Pure parsing of Manifold API v0 payloads (LiteMarket, FullMarket, Bet) into markets.types.

Manifold times are Unix **milliseconds**. Two kinds of market are taken:

- BINARY: ``probability`` is the YES price and NO is its complement by construction of
  Manifold's binary market maker. Resolutions: YES, NO, CANCEL (refund: VOID) and MKT (pays
  ``resolutionProbability``).
- MULTIPLE_CHOICE whose answers sum to one (``shouldAnswersSumToOne``; only a FullMarket lists
  its ``answers``): one outcome per answer, named by its text, priced at the answer's
  ``probability``; the answer ids are kept as the market's token ids. Resolution: an answer id
  (that answer wins), CANCEL (VOID), or MKT (proportional payouts: left for a manual resolution).
  Answers that do not sum to one are separate yes/no questions in one market, which a market of
  one winner cannot express: refused (``Unsupported``), as are the other types.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from markets.http import PayloadError, amount, as_list, as_object, epoch_time, probability, require
from markets.types import (
    BINARY_OUTCOMES,
    NO,
    YES,
    Market,
    PriceSnapshot,
    Resolution,
    ResolutionKind,
    Undecided,
    Venue,
)

PROB_SOURCE = "manifold-prob"
BETS_SOURCE = "manifold-bets"
CLOSED_SOURCE = "manifold-closed"  # an observation without prices: seen closed at this time
_HALF = Decimal("0.5")


def describe(payload: Mapping[str, Any]) -> str:
    return f"manifold market {payload.get('id')!r}"


BINARY = "BINARY"
MULTIPLE_CHOICE = "MULTIPLE_CHOICE"


class Unsupported(PayloadError):
    """A market of a kind the arena does not trade (a numeric market, a poll, independent answers)."""


def market_from_manifold(payload: Mapping[str, Any]) -> Market:
    """The arena's Market for a Manifold BINARY market, or a MULTIPLE_CHOICE one whose answers sum
    to one (from a FullMarket, which lists them); other kinds are refused (``Unsupported``)."""
    where = describe(payload)
    kind = payload.get("outcomeType")
    if kind not in (BINARY, MULTIPLE_CHOICE):
        raise Unsupported(f"{where}: outcomeType {kind!r} is not supported (BINARY or MULTIPLE_CHOICE)")
    answers = _answers(payload) if kind == MULTIPLE_CHOICE else {}
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
        outcomes=tuple(answers) if answers else BINARY_OUTCOMES,
        token_ids=answers,
    )


def _answers(payload: Mapping[str, Any]) -> dict[str, str]:
    """A multiple-choice market's answers, text -> answer id, in Manifold's order."""
    where = describe(payload)
    if payload.get("shouldAnswersSumToOne") is not True:
        raise Unsupported(
            f"{where}: a MULTIPLE_CHOICE market whose answers do not sum to one is not supported"
        )
    found: dict[str, str] = {}
    for index, item in enumerate(as_list(payload.get("answers"), where=f"{where} answers")):
        answer = as_object(item, where=f"{where} answers[{index}]")
        answer_id = require(answer, "id", str, where=f"{where} answers[{index}]")
        text = require(answer, "text", str, where=f"{where} answers[{index}]").strip()
        if not answer_id or not text or text in found:
            raise PayloadError(f"{where}: answer [{index}] needs an id and a text of its own, got {text!r}")
        found[text] = answer_id
    if len(found) < 2:
        raise PayloadError(f"{where}: a MULTIPLE_CHOICE market needs at least two answers, got {len(found)}")
    return found


def manifold_prices(payload: Mapping[str, Any], market: Market, observed_at: datetime) -> PriceSnapshot:
    """A binary market's ``probability`` as the YES price (NO = 1 − YES on a binary Manifold
    market); a multiple-choice market's answers at their own ``probability``."""
    where = describe(payload)
    if not market.is_binary:
        chances = _answer_field(payload, market, "probability")
        prices = {
            o: probability(chances[o], where=where, field=f"probability of {o!r}") for o in market.outcomes
        }
        return PriceSnapshot(market.market_id, prices, observed_at, PROB_SOURCE)
    yes = probability(payload.get("probability"), where=where, field="probability")
    return PriceSnapshot(market.market_id, {YES: yes, NO: 1 - yes}, observed_at, PROB_SOURCE)


def _answer_field(payload: Mapping[str, Any], market: Market, field: str) -> dict[str, object]:
    """``field`` of each of the market's answers, by outcome; every answer must still be there."""
    where = describe(payload)
    by_id = {
        a.get("id"): a
        for a in as_list(payload.get("answers"), where=f"{where} answers")
        if isinstance(a, dict)
    }
    missing = [o for o in market.outcomes if market.token_ids[o] not in by_id]
    if missing:
        raise PayloadError(f"{where}: answers {missing} are no longer listed")
    return {o: by_id[market.token_ids[o]].get(field) for o in market.outcomes}


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
    if outcome == "CANCEL":
        return Resolution.binary(market.market_id, ResolutionKind.VOID, resolved_at, PROB_SOURCE)
    if not market.is_binary:
        return _answer_resolution(market, outcome, resolved_at, where)
    simple = {"YES": ResolutionKind.YES, "NO": ResolutionKind.NO}
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


def _answer_resolution(
    market: Market, outcome: object, resolved_at: datetime, where: str
) -> Resolution | Undecided:
    """A multiple-choice resolution: the answer whose id it names wins; MKT splits the payout
    across answers, which waits for a manual resolution."""
    if outcome == "MKT":
        return Undecided(
            market.market_id, "resolved MKT: proportional payouts across answers need a manual resolution"
        )
    winners = [o for o, answer_id in market.token_ids.items() if answer_id == outcome]
    if not winners:
        raise PayloadError(f"{where}: resolution {outcome!r} is not one of the market's answer ids")
    return Resolution.winner(market.market_id, market.outcomes, winners[0], resolved_at, PROB_SOURCE)


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
