"""Pure parsing of Gamma market payloads into markets.types.

Gamma traps handled here: ``outcomes``, ``outcomePrices`` and
``clobTokenIds`` are JSON arrays *encoded as strings*; prices inside are decimal strings;
``conditionId`` (0x… hex), the Gamma ``id`` (a numeric string) and the CLOB token ids (one
~77-digit decimal per outcome) are three different things; ``closed`` only means trading stopped.

The arena keys Polymarket markets by ``conditionId``: it is the market's key on CLOB and the Data
API, and the id the bundled ForecastBench replay data uses, so live and replay ids agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, TypedDict

from markets.http import PayloadError, amount, iso_time, plain_probabilities, probability, require
from markets.types import (
    NO,
    YES,
    Market,
    PriceSnapshot,
    Resolution,
    ResolutionKind,
    Undecided,
    Venue,
    market_key,
)

GAMMA_SOURCE = "polymarket-gamma"
# An observation without prices: "Gamma said this market had stopped trading at this time".
CLOSED_SOURCE = "polymarket-closed"
_CONDITION_ID = re.compile(r"0x[0-9a-fA-F]{64}")
_TOKEN_ID = re.compile(r"[0-9]{1,100}")
_WIN = Decimal("0.99")
_LOSE = Decimal("0.01")
_HALF = Decimal("0.5")
_KEY_PREFIX = market_key(Venue.POLYMARKET, "")  # how every key starts (read 10,000 times a sync)


class ListingFields(TypedDict, total=False):
    """The fields of a market payload that a sync's listing reads before it knows whether the
    market changed since its last sync (``describe``, ``market_key_of``, ``is_open``, the token
    ids, ``price_values``, ``close_time``, ``liquidity``): a Gamma listing is read as these alone,
    each market decoded whole only when it must be parsed (``markets.listing_items``). Values are
    as JSON decodes them; every function above validates what it reads, as on a whole payload."""

    id: Any
    conditionId: Any
    closed: Any
    clobTokenIds: Any
    outcomes: Any
    outcomePrices: Any
    endDate: Any
    liquidityNum: Any
    liquidity: Any


def describe(payload: Mapping[str, Any]) -> str:
    """How error messages name a Gamma market: its Gamma id and, when present, its condition id."""
    condition = payload.get("conditionId")
    suffix = f" ({condition})" if isinstance(condition, str) and condition else ""
    return f"polymarket market {payload.get('id')!r}{suffix}"


def gamma_id(payload: Mapping[str, Any]) -> str:
    value = payload.get("id")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value.isdigit():
        raise PayloadError(f"{describe(payload)}: field 'id' must be a numeric string, got {value!r}")
    return value


def condition_id(payload: Mapping[str, Any]) -> str:
    value = payload.get("conditionId")
    if not isinstance(value, str) or not _CONDITION_ID.fullmatch(value):
        raise PayloadError(
            f"{describe(payload)}: field 'conditionId' must be 0x + 64 hex digits, got {value!r}"
        )
    return value.lower()


def json_array(payload: Mapping[str, Any], field: str) -> list[Any]:
    """A Gamma JSON-in-JSON field: a string holding a JSON array (a native array is accepted too)."""
    raw = payload.get(field)
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, str):
        raise PayloadError(
            f"{describe(payload)}: field {field!r} must be a JSON array in a string, got {raw!r}"
        )
    try:
        value = _loads(raw)
    except ValueError:
        raise PayloadError(f"{describe(payload)}: field {field!r} is not valid JSON: {raw[:80]!r}") from None
    if not isinstance(value, list):
        raise PayloadError(f"{describe(payload)}: field {field!r} must decode to an array, got {raw[:80]!r}")
    return value


_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def _loads(text: str) -> Any:
    """``json.loads(text)``, without its layers of Python calls for the usual case (a value from
    the first character to the last): a sync reads three of these strings per market."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration:  # leading whitespace, or not JSON: json.loads says which
        return json.loads(text)
    return value if end == len(text) else json.loads(text)


def outcome_labels(payload: Mapping[str, Any]) -> list[str]:
    """The outcome labels in the payload's order, with Yes/No normalised to the arena's YES/NO.

    Order matters: ``clobTokenIds[i]`` and ``outcomePrices[i]`` pair with ``outcomes[i]``, and
    index 0 is not always "Yes" (sports markets use team names or Over/Under).
    """
    labels = json_array(payload, "outcomes")
    if len(labels) < 2 or not all(isinstance(x, str) and x.strip() for x in labels):
        raise PayloadError(f"{describe(payload)}: 'outcomes' must list at least two names, got {labels!r}")
    cleaned = [x.strip() for x in labels]
    if sorted(x.lower() for x in cleaned) == ["no", "yes"]:
        cleaned = [YES if x.lower() == "yes" else NO for x in cleaned]
    if len(set(cleaned)) != len(cleaned):
        raise PayloadError(f"{describe(payload)}: 'outcomes' has duplicate names: {labels!r}")
    return cleaned


def market_from_gamma(payload: Mapping[str, Any]) -> Market:
    """The arena's Market for one Gamma market payload (from /markets, /markets/keyset or an event)."""
    where = describe(payload)
    labels = outcome_labels(payload)
    tokens = json_array(payload, "clobTokenIds")
    if len(tokens) != len(labels) or not all(isinstance(t, str) and _TOKEN_ID.fullmatch(t) for t in tokens):
        raise PayloadError(
            f"{where}: 'clobTokenIds' must hold one decimal token id per outcome {labels}, got {tokens!r}"
        )
    outcomes = (YES, NO) if set(labels) == {YES, NO} else tuple(labels)
    question = require(payload, "question", str, where=where).strip()
    if not question:
        raise PayloadError(f"{where}: field 'question' is empty")
    slug = payload.get("slug")
    return Market(
        venue=Venue.POLYMARKET,
        venue_id=condition_id(payload),
        question=question,
        outcomes=outcomes,
        description=_text(payload, "description"),
        open_time=iso_time(payload.get("startDate"), where=where, field="startDate"),
        close_time=close_time(payload),
        category=_category(payload),
        volume=amount(*_first(payload, "volumeNum", "volume"), where=where),
        liquidity=liquidity(payload),
        url=f"https://polymarket.com/market/{slug}" if isinstance(slug, str) and slug else None,
        token_ids=dict(zip(labels, tokens, strict=True)),
    )


def market_key_of(payload: Mapping[str, Any]) -> str | None:
    """The arena id a payload's market would get, read without validating the payload (a value
    ``market_from_gamma`` would refuse yields an id no stored market has)."""
    value = payload.get("conditionId")
    return _KEY_PREFIX + value.lower() if isinstance(value, str) else None


def close_time(payload: Mapping[str, Any]) -> datetime | None:
    # The market's name is built for an error only (a sync reads 10,000 good values for each bad
    # one): a value refused is read again, with the name, to raise the same error naming it.
    try:
        return iso_time(payload.get("endDate"), where="", field="endDate")
    except PayloadError:
        return iso_time(payload.get("endDate"), where=describe(payload), field="endDate")


def liquidity(payload: Mapping[str, Any]) -> Decimal | None:
    value, field = _first(payload, "liquidityNum", "liquidity")
    try:  # as ``close_time`` does
        return amount(value, field, where="")
    except PayloadError:
        return amount(value, field, where=describe(payload))


def gamma_prices(payload: Mapping[str, Any], market: Market, observed_at: datetime) -> PriceSnapshot:
    """Gamma's ``outcomePrices`` as a comparison snapshot (the accounting price is the CLOB midpoint)."""
    return PriceSnapshot(
        market_id=market.market_id,
        prices=outcome_prices(payload),
        observed_at=observed_at,
        source=GAMMA_SOURCE,
    )


def outcome_prices(payload: Mapping[str, Any]) -> dict[str, Decimal]:
    """``outcomePrices`` by outcome label; every entry must be a valid probability."""
    labels = outcome_labels(payload)
    raw = json_array(payload, "outcomePrices")
    if len(raw) != len(labels):
        raise PayloadError(
            f"{describe(payload)}: 'outcomePrices' has {len(raw)} entries for {len(labels)} outcomes"
        )
    plain = plain_probabilities(raw)
    if plain is not None:
        return dict(zip(labels, plain, strict=True))
    where = describe(payload)
    return {
        label: probability(p, where=where, field=f"outcomePrices[{label}]")
        for label, p in zip(labels, raw, strict=True)
    }


def price_values(payload: Mapping[str, Any], outcomes: int) -> Sequence[Decimal]:
    """``outcomePrices`` in the payload's order, for a payload known to list ``outcomes`` outcomes:
    what a filter on prices needs, without decoding the labels; checked and refused as
    ``outcome_prices`` does (an unusual value is read by it, so the error names the outcome)."""
    raw = json_array(payload, "outcomePrices")
    plain = plain_probabilities(raw) if len(raw) == outcomes else None
    return plain if plain is not None else list(outcome_prices(payload).values())


def is_open(payload: Mapping[str, Any]) -> bool:
    """Trading open: ``closed`` is false. (``active`` stays true on resolved markets: ignore it.)"""
    closed = payload.get("closed")
    if not isinstance(closed, bool):
        raise PayloadError(f"{describe(payload)}: field 'closed' must be a boolean, got {closed!r}")
    return not closed


def gamma_resolution(
    payload: Mapping[str, Any], market: Market, observed_at: datetime
) -> Resolution | Undecided | None:
    """The final outcome if Polymarket has one; ``Undecided`` with the reason if not yet; None if open.

    Final means ``closed`` and UMA status ``resolved`` (or ``automaticallyResolved``); then the
    payout vector decides: one outcome >= 0.99 with the rest <= 0.01 wins, all within 0.01 of 0.5
    is a 50-50. A proposed or disputed answer is not final (it can still flip), so it waits.
    ``resolved_at`` is ``umaEndDate`` or ``closedTime``; failing both, the time we saw it resolved.
    """
    if is_open(payload):
        return None
    status = payload.get("umaResolutionStatus")
    if status != "resolved" and payload.get("automaticallyResolved") is not True:
        why = f"UMA status {status!r} is not final" if status else "no UMA resolution proposed yet"
        return Undecided(market.market_id, f"closed; {why}")
    payouts = outcome_prices(payload)
    where = describe(payload)
    resolved_at = (
        iso_time(payload.get("umaEndDate"), where=where, field="umaEndDate")
        or iso_time(payload.get("closedTime"), where=where, field="closedTime")
        or observed_at
    )
    return _resolution_from_payouts(market, payouts, resolved_at)


def _resolution_from_payouts(
    market: Market, payouts: Mapping[str, Decimal], resolved_at: datetime
) -> Resolution | Undecided:
    winners = [label for label, p in payouts.items() if p >= _WIN]
    if len(winners) == 1 and all(p <= _LOSE for label, p in payouts.items() if label != winners[0]):
        if market.is_binary:
            kind = ResolutionKind.YES if winners[0] == YES else ResolutionKind.NO
            return Resolution.binary(market.market_id, kind, resolved_at, GAMMA_SOURCE)
        return Resolution.winner(market.market_id, market.outcomes, winners[0], resolved_at, GAMMA_SOURCE)
    if len(payouts) == 2 and all(abs(p - _HALF) <= _LOSE for p in payouts.values()):
        halves = {label: _HALF for label in market.outcomes}
        return Resolution(market.market_id, ResolutionKind.FIFTY_FIFTY, halves, resolved_at, GAMMA_SOURCE)
    shown = {k: str(v) for k, v in payouts.items()}
    return Undecided(
        market.market_id, f"UMA resolved but payout vector {shown} is neither decisive nor 50-50"
    )


def markets_of_event(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The market payloads embedded in a Gamma event, each given the event's category if it has none."""
    where = f"polymarket event {event.get('id')!r}"
    markets = event.get("markets", [])
    if not isinstance(markets, list) or not all(isinstance(m, dict) for m in markets):
        raise PayloadError(f"{where}: field 'markets' must be an array of objects")
    category = event.get("category")
    return [
        {"category": category, **m} if isinstance(category, str) and "category" not in m else m
        for m in markets
    ]


def _text(payload: Mapping[str, Any], key: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) else ""


def _category(payload: Mapping[str, Any]) -> str | None:
    category = payload.get("category")
    if isinstance(category, str) and category.strip():
        return category.strip()
    events = payload.get("events")
    if isinstance(events, list) and events and isinstance(events[0], dict):
        parent = events[0].get("category")
        if isinstance(parent, str) and parent.strip():
            return parent.strip()
    return None


def _first(payload: Mapping[str, Any], *keys: str) -> tuple[object, str]:
    """The value and name of the first of ``keys`` present (Gamma sends number and string twins)."""
    for key in keys:
        if payload.get(key) is not None:
            return payload[key], key
    return None, keys[0]


def ordered_tokens(market: Market) -> Sequence[str]:
    """The market's CLOB token ids in outcome order."""
    return [market.token_ids[o] for o in market.outcomes]
