"""Manifold payload parsing on Manifold's published example responses (MIT) and real ForecastBench markets."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from markets.http import PayloadError
from markets.manifold import parse
from markets.types import NO, YES, ResolutionKind, Undecided
from tests.fakes.manifold_server import DOCS_BETS, DOCS_LITE_MARKET, lite_market

NOW = datetime(2026, 8, 21, 12, tzinfo=UTC)

# GET /v0/market/{id} example (FREE_RESPONSE, dpm-2, resolved MKT) from Manifold's docs, trimmed to
# the fields the parser reads; answers omitted.
DOCS_FREE_RESPONSE = {
    "id": "lEoqtnDgJzft6apSKzYK",
    "question": "What is good?",
    "outcomeType": "FREE_RESPONSE",
    "mechanism": "dpm-2",
    "isResolved": True,
    "resolution": "MKT",
    "resolutionTime": 1655265001448,
}


def test_docs_example_lite_market_parses_with_millisecond_times() -> None:
    market = parse.market_from_manifold(DOCS_LITE_MARKET)
    assert market.market_id == "manifold:EvIhzcJXwhL0HavaszD7"
    assert market.outcomes == (YES, NO)
    assert market.open_time == datetime(2022, 5, 29, 18, 54, 32, 294000, tzinfo=UTC)
    assert market.close_time == datetime(2022, 5, 30, 6, 59, tzinfo=UTC)
    assert market.liquidity == Decimal("102.65696071594805") and market.volume == Decimal(241)
    resolution = parse.manifold_resolution(DOCS_LITE_MARKET, market, NOW)
    assert resolution is not None and not isinstance(resolution, Undecided)
    assert resolution.kind is ResolutionKind.YES
    assert resolution.resolved_at == datetime(2022, 5, 30, 15, 21, 17, 78000, tzinfo=UTC)


def test_probability_is_the_yes_price_and_no_its_complement() -> None:
    payload = lite_market(2)
    snapshot = parse.manifold_prices(payload, parse.market_from_manifold(payload), NOW)
    assert (
        snapshot.prices == {YES: Decimal("0.2282"), NO: Decimal("0.7718")}
        and snapshot.source == "manifold-prob"
    )


def test_float_probabilities_are_rounded_to_the_price_places_a_fill_can_store() -> None:
    payload = copy.deepcopy(DOCS_LITE_MARKET) | {"isResolved": False, "closeTime": None}
    snapshot = parse.manifold_prices(payload, parse.market_from_manifold(payload), NOW)
    assert snapshot.prices == {
        YES: Decimal("0.8958175226"),
        NO: Decimal("0.1041824774"),
    }  # 0.8958175225896258
    assert sum(snapshot.prices.values()) == 1
    exact = lite_market(0, probability="0.123456789012345")  # decimal text is kept as written
    assert parse.manifold_prices(exact, parse.market_from_manifold(exact), NOW).prices[YES] == Decimal(
        "0.123456789012345"
    )


@pytest.mark.parametrize("bad", [float("nan"), 1.01, -0.2, None, "0.4x", True])
def test_bad_probability_is_refused(bad: object) -> None:
    payload = lite_market(0, probability=bad)
    with pytest.raises(PayloadError, match="manifold market '0587u5Mk7ng2NaOkgCu1': probability"):
        parse.manifold_prices(payload, parse.market_from_manifold(payload), NOW)


def test_non_binary_markets_are_refused_by_name() -> None:
    with pytest.raises(PayloadError, match="outcomeType 'FREE_RESPONSE' is not supported"):
        parse.market_from_manifold(DOCS_FREE_RESPONSE)


@pytest.mark.parametrize(
    ("fields", "kind", "payouts"),
    [
        ({"resolution": "NO"}, ResolutionKind.NO, {YES: 0, NO: 1}),
        ({"resolution": "CANCEL"}, ResolutionKind.VOID, {}),
        (
            {"resolution": "MKT", "resolutionProbability": 0.5},
            ResolutionKind.FIFTY_FIFTY,
            {YES: 0.5, NO: 0.5},
        ),
    ],
)
def test_resolutions(fields: dict[str, object], kind: ResolutionKind, payouts: dict[str, float]) -> None:
    payload = lite_market(1, isResolved=True, resolutionTime=1767225540000, **fields)
    resolution = parse.manifold_resolution(payload, parse.market_from_manifold(payload), NOW)
    assert resolution is not None and not isinstance(resolution, Undecided)
    assert resolution.kind is kind
    assert dict(resolution.payouts) == {k: Decimal(str(v)) for k, v in payouts.items()}
    assert resolution.resolved_at == datetime(2025, 12, 31, 23, 59, tzinfo=UTC)


def test_proportional_mkt_waits_for_a_manual_resolution() -> None:
    payload = lite_market(1, isResolved=True, resolution="MKT", resolutionProbability=0.73, resolutionTime=1)
    outcome = parse.manifold_resolution(payload, parse.market_from_manifold(payload), NOW)
    assert isinstance(outcome, Undecided) and "resolved MKT at 0.73" in outcome.reason


def test_closed_unresolved_market_is_pending_and_open_market_is_not() -> None:
    closed = lite_market(1, closeTime=int(datetime(2026, 8, 1, tzinfo=UTC).timestamp() * 1000))
    outcome = parse.manifold_resolution(closed, parse.market_from_manifold(closed), NOW)
    assert isinstance(outcome, Undecided) and outcome.reason == "closed; awaiting resolution"
    assert not parse.is_open(closed, NOW)
    open_market = lite_market(1)
    assert parse.manifold_resolution(open_market, parse.market_from_manifold(open_market), NOW) is None
    payload = lite_market(1, isResolved=True, resolution="MAYBE")
    with pytest.raises(PayloadError, match="resolution must be YES, NO, MKT or CANCEL, got 'MAYBE'"):
        parse.manifold_resolution(payload, parse.market_from_manifold(payload), NOW)


def test_bet_history_uses_filled_bets_only() -> None:
    points = parse.bet_history(DOCS_BETS, "manifold:Tz5dA01GkK5QKiQfZeDL")
    # probAfter 0.5730753474948571 is a binary float: kept to the arena's 10 price places
    assert points == [(datetime(2022, 8, 2, 23, 25, 57, 271000, tzinfo=UTC), Decimal("0.5730753475"))]
    cancelled = copy.deepcopy(DOCS_BETS)
    cancelled[1]["isCancelled"] = True
    assert parse.bet_history(cancelled, "m") == []
    broken = copy.deepcopy(DOCS_BETS)
    broken[1]["probAfter"] = float("nan")
    with pytest.raises(PayloadError, match=r"manifold bets of 'm': \[1\]\.probAfter must be finite"):
        parse.bet_history(broken, "m")
