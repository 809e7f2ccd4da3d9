"""Pure parsing of Gamma and CLOB payloads (shapes from docs/market-apis.md, real ids from ForecastBench)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from markets.http import PayloadError
from markets.polymarket import clob, gamma
from markets.types import NO, YES, ResolutionKind, Undecided
from tests.fakes.polymarket_server import REAL_MARKETS, gamma_market, real_market, token_ids

NOW = datetime(2026, 8, 21, 12, tzinfo=UTC)
KEN_SIM = REAL_MARKETS[0][0]


def test_json_in_json_fields_become_a_market_keyed_by_condition_id() -> None:
    payload = real_market(0)
    assert isinstance(payload["outcomes"], str) and isinstance(payload["clobTokenIds"], str)
    market = gamma.market_from_gamma(payload)
    assert market.market_id == f"polymarket:{KEN_SIM}"
    assert market.outcomes == (YES, NO) and market.is_binary
    yes_token, no_token = token_ids(KEN_SIM)
    assert dict(market.token_ids) == {YES: yes_token, NO: no_token}
    assert len(yes_token) == 77 and yes_token.isdigit()
    assert market.volume == Decimal("1000000.0") and market.liquidity == Decimal("20000.0")
    assert market.close_time == datetime(2026, 10, 17, tzinfo=UTC)
    assert market.url == "https://polymarket.com/market/will-ken-sim-win-the-2026-vancouver-mayoral-election"


def test_token_ids_pair_with_outcomes_by_position_not_by_assuming_yes_first() -> None:
    payload = real_market(0)
    tokens = json.loads(payload["clobTokenIds"])
    payload.update(outcomes='["No", "Yes"]', outcomePrices='["0.635", "0.365"]')
    market = gamma.market_from_gamma(payload)
    assert market.outcomes == (YES, NO)
    assert market.token_ids[NO] == tokens[0] and market.token_ids[YES] == tokens[1]
    assert gamma.outcome_prices(payload) == {NO: Decimal("0.635"), YES: Decimal("0.365")}


def test_named_outcomes_are_kept_as_labels() -> None:
    condition = "0x" + "ab" * 32
    payload = gamma_market(
        "1", condition, "Lakers vs. Celtics", outcomes=("Lakers", "Celtics"), prices=("0.6", "0.4")
    )
    market = gamma.market_from_gamma(payload)
    assert market.outcomes == ("Lakers", "Celtics") and not market.is_binary
    assert set(market.token_ids) == {"Lakers", "Celtics"}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("outcomes", "[Yes, No]", "field 'outcomes' is not valid JSON"),
        ("outcomes", 7, "field 'outcomes' must be a JSON array in a string"),
        ("clobTokenIds", '["123"]', "'clobTokenIds' must hold one decimal token id per outcome"),
        ("clobTokenIds", '["0xabc", "0xdef"]', "'clobTokenIds' must hold one decimal token id per outcome"),
        ("conditionId", "559651", "field 'conditionId' must be 0x + 64 hex digits"),
        ("question", "  ", "field 'question' is empty"),
        ("endDate", "next tuesday", "endDate must be an ISO 8601 time"),
        ("volumeNum", "NaN", "volumeNum must be a finite non-negative number"),
    ],
)
def test_malformed_market_fields_are_named_in_one_line(field: str, value: object, message: str) -> None:
    payload = real_market(1) | {field: value}
    with pytest.raises(PayloadError, match="polymarket market '560001'") as err:
        gamma.market_from_gamma(payload)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "1.2", "-0.1", "", "abc", None, True])
def test_invalid_outcome_prices_are_refused_never_replaced(bad: object) -> None:
    payload = real_market(2) | {"outcomePrices": json.dumps([bad, "0.5"])}
    with pytest.raises(PayloadError, match=r"outcomePrices\[YES\]"):
        gamma.outcome_prices(payload)


def test_gamma_prices_are_exact_decimal_strings_with_gamma_provenance() -> None:
    payload = real_market(4)
    snapshot = gamma.gamma_prices(payload, gamma.market_from_gamma(payload), NOW)
    assert snapshot.source == "polymarket-gamma"
    assert snapshot.prices == {YES: Decimal("0.6225"), NO: Decimal("0.3775")}


def _closed(index: int = 0, **fields: object) -> dict[str, object]:
    return real_market(index) | {"closed": True, **fields}


def test_open_market_has_no_resolution() -> None:
    payload = real_market(0)
    assert gamma.gamma_resolution(payload, gamma.market_from_gamma(payload), NOW) is None


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({}, "closed; no UMA resolution proposed yet"),
        (
            {"umaResolutionStatus": "proposed", "outcomePrices": '["1", "0"]'},
            "UMA status 'proposed' is not final",
        ),
        ({"umaResolutionStatus": "disputed"}, "UMA status 'disputed' is not final"),
        ({"umaResolutionStatus": "resolved", "outcomePrices": '["0", "0"]'}, "neither decisive nor 50-50"),
        (
            {"umaResolutionStatus": "resolved", "outcomePrices": '["0.7", "0.3"]'},
            "neither decisive nor 50-50",
        ),
    ],
)
def test_closed_but_not_final_is_deferred_with_the_reason(fields: dict[str, object], reason: str) -> None:
    payload = _closed(**fields)
    outcome = gamma.gamma_resolution(payload, gamma.market_from_gamma(payload), NOW)
    assert isinstance(outcome, Undecided) and reason in outcome.reason


@pytest.mark.parametrize(
    ("prices", "kind", "payouts"),
    [
        ('["1", "0"]', ResolutionKind.YES, {YES: 1, NO: 0}),
        ('["0", "1"]', ResolutionKind.NO, {YES: 0, NO: 1}),
        ('["0.5", "0.5"]', ResolutionKind.FIFTY_FIFTY, {YES: Decimal("0.5"), NO: Decimal("0.5")}),
        # AMM-era payout vectors are long decimals near 0/1, not exactly "1".
        (
            '["0.9999995886320190", "0.0000004113679809846114013590098187297978"]',
            ResolutionKind.YES,
            {YES: 1, NO: 0},
        ),
    ],
)
def test_final_uma_resolution_reads_the_payout_vector(
    prices: str, kind: ResolutionKind, payouts: dict
) -> None:
    payload = _closed(umaResolutionStatus="resolved", outcomePrices=prices, umaEndDate="2026-08-20T18:00:00Z")
    resolution = gamma.gamma_resolution(payload, gamma.market_from_gamma(payload), NOW)
    assert not isinstance(resolution, Undecided) and resolution is not None
    assert resolution.kind is kind and dict(resolution.payouts) == {k: Decimal(v) for k, v in payouts.items()}
    assert resolution.resolved_at == datetime(2026, 8, 20, 18, tzinfo=UTC)
    assert resolution.source == "polymarket-gamma"


def test_resolution_time_falls_back_to_gamma_closed_time_format_then_to_observation() -> None:
    payload = _closed(
        umaResolutionStatus="resolved", outcomePrices='["0", "1"]', closedTime="2021-12-05 20:37:01+00"
    )
    resolution = gamma.gamma_resolution(payload, gamma.market_from_gamma(payload), NOW)
    assert resolution is not None and not isinstance(resolution, Undecided)
    assert resolution.resolved_at == datetime(2021, 12, 5, 20, 37, 1, tzinfo=UTC)
    bare = _closed(umaResolutionStatus="resolved", outcomePrices='["0", "1"]')
    late = gamma.gamma_resolution(bare, gamma.market_from_gamma(bare), NOW)
    assert late is not None and not isinstance(late, Undecided) and late.resolved_at == NOW


def test_named_outcome_market_resolves_to_its_winner() -> None:
    payload = gamma_market(
        "9",
        "0x" + "cd" * 32,
        "Lakers vs. Celtics",
        outcomes=("Lakers", "Celtics"),
        prices=("0", "1"),
        closed=True,
    ) | {"umaResolutionStatus": "resolved"}
    resolution = gamma.gamma_resolution(payload, gamma.market_from_gamma(payload), NOW)
    assert resolution is not None and not isinstance(resolution, Undecided)
    assert resolution.kind is ResolutionKind.OUTCOME and resolution.payouts["Celtics"] == 1


def test_event_markets_inherit_the_event_category() -> None:
    event = {
        "id": "2890",
        "category": "Sports",
        "markets": [real_market(0) | {"category": None}, real_market(1)],
    }
    markets = gamma.markets_of_event(event)
    assert [m["id"] for m in markets] == ["560000", "560001"]
    assert gamma.market_from_gamma(markets[1]).category == "Politics"
    with pytest.raises(PayloadError, match="polymarket event '2890': field 'markets'"):
        gamma.markets_of_event({"id": "2890", "markets": "[]"})


def test_midpoint_accepts_both_documented_spellings() -> None:
    assert clob.midpoint({"mid": "0.435"}, "1") == Decimal("0.435")
    assert clob.midpoint({"mid_price": "0.45"}, "1") == Decimal("0.45")
    with pytest.raises(PayloadError, match="CLOB /midpoint token 1: mid must be within"):
        clob.midpoint({"mid": "1.5"}, "1")
    with pytest.raises(PayloadError, match="expected a JSON object"):
        clob.midpoint(["0.4"], "1")


def test_midpoints_give_a_reason_per_token_instead_of_a_guess() -> None:
    found = clob.midpoints({"1": "0.25", "2": "NaN", "4": 0.5}, ["1", "2", "3", "4"])
    assert found["1"] == Decimal("0.25") and found["4"] == Decimal("0.5")
    assert isinstance(found["2"], str) and "must be finite" in found["2"]
    assert found["3"] == "absent from the /midpoints response (no order book?)"


def test_clob_answers_are_parsed_on_first_read_and_fingerprinted_as_sent() -> None:
    book = {
        "asset_id": "1",
        "timestamp": "1",
        "bids": [{"price": "0.40", "size": "5"}, {"price": "0.44", "size": "1"}],
        "asks": [{"price": "0.50", "size": "3"}, {"price": "0.46", "size": "2"}],
    }
    bids = [{"price": "0.40", "size": "9"}, {"price": "0.44", "size": "1"}]
    resized = {**book, "timestamp": "2", "bids": bids}
    deeper = {**book, "bids": [{"price": "0.41", "size": "5"}, {"price": "0.44", "size": "1"}]}
    odd = {**book, "asset_id": "2", "bids": [{"price": 0.44, "size": "1"}]}
    quotes = clob.books([book, odd], ["1", "2", "3"])
    assert quotes["1"] == (Decimal("0.44"), Decimal("0.46")) and quotes["3"] == clob.BOOK_ABSENT
    assert quotes["2"] == clob.best_quote(odd, "2") and quotes.fingerprint("2") == "~" + repr(quotes["2"])
    assert quotes.fingerprint("3") == "~" + repr(clob.BOOK_ABSENT)

    def printed(payload: dict[str, Any]) -> str | None:
        return clob.books([payload], ["1"]).fingerprint("1")

    assert printed(book) == printed(resized) != printed(deeper)  # sizes and times do not count
    fresh = clob.books([book], ["1"])
    before = fresh.fingerprint("1")  # reading the value does not change the fingerprint
    assert fresh["1"] == (Decimal("0.44"), Decimal("0.46")) and fresh.fingerprint("1") == before
    mids = clob.midpoints({"1": "0.25", "2": 0.5}, ["1", "2", "9"])
    assert mids.fingerprint("1") == "=0.25" and mids.fingerprint("2") == "~Decimal('0.5')"
    assert mids.fingerprint("9") == "~" + repr(clob.MID_ABSENT) and len(mids) == 3
    merged = clob.Mids()
    merged.update_from(mids)
    assert dict(merged) == {"1": Decimal("0.25"), "2": Decimal("0.5"), "9": clob.MID_ABSENT}


def test_best_quote_does_not_trust_book_ordering() -> None:
    documented = {
        "bids": [{"price": "0.40", "size": "5"}, {"price": "0.44", "size": "1"}],
        "asks": [{"price": "0.50", "size": "3"}, {"price": "0.46", "size": "2"}],
    }
    assert clob.best_quote(documented, "1") == (Decimal("0.44"), Decimal("0.46"))
    reversed_book = {"bids": documented["bids"][::-1], "asks": documented["asks"][::-1]}
    assert clob.best_quote(reversed_book, "1") == (Decimal("0.44"), Decimal("0.46"))
    assert clob.best_quote({"bids": [], "asks": []}, "1") == (None, None)


BOOK = {
    "market": KEN_SIM,
    "asset_id": "1",
    "timestamp": "1755777600000",
    "hash": "abc",
    "bids": [{"price": "0.40", "size": "5"}, {"price": "0.44", "size": "1"}],
    "asks": [{"price": "0.50", "size": "3"}, {"price": "0.46", "size": "2"}],
}


@pytest.mark.parametrize(
    "books",
    [
        [BOOK, {**BOOK, "asset_id": "2", "bids": [], "asks": [{"price": "0.9", "size": "1"}]}],
        [BOOK, {**BOOK, "asset_id": "2", "bids": [{"price": 0.4, "size": "1"}]}],  # a number
        [BOOK, {**BOOK, "asset_id": "2", "bids": [{"size": "1"}]}],  # a level without a price
        [BOOK, {**BOOK, "asset_id": "2", "asks": None}],
    ],
)
def test_books_of_the_usual_shape_read_straight_match_the_whole_decode(books: list[dict[str, Any]]) -> None:
    content = json.dumps(books).encode()
    fast, whole = (
        clob.books(clob.decode_books(content), ["1", "2", "3"]),
        clob.books(json.loads(content), ["1", "2", "3"]),
    )
    assert [fast.fingerprint(t) for t in "123"] == [whole.fingerprint(t) for t in "123"]
    assert [fast[t] for t in "123"] == [whole[t] for t in "123"]
    assert fast["1"] == (Decimal("0.44"), Decimal("0.46")) and fast["3"] == clob.BOOK_ABSENT
    usual = books[1]["bids"] == [] and books[1]["asks"] is not None
    assert isinstance(clob.decode_books(content), clob.LevelPrices) is usual


def test_a_book_without_its_token_id_is_named_whichever_way_it_is_read() -> None:
    for content in (json.dumps([{**BOOK, "asset_id": ""}]).encode(), b'[{"bids": [], "asks": []}]'):
        with pytest.raises(PayloadError, match="asset_id"):
            clob.books(clob.decode_books(content), ["1"])


def test_price_history_points_are_stamped_at_the_end_of_their_bucket() -> None:
    start = int(datetime(2026, 8, 20, tzinfo=UTC).timestamp())
    payload = {"history": [{"t": start + 3600, "p": 0.41}, {"t": start, "p": 0.4}]}
    points = clob.price_history(payload, "1", fidelity_minutes=60)
    assert points == [
        (datetime(2026, 8, 20, 1, tzinfo=UTC), Decimal("0.4")),
        (datetime(2026, 8, 20, 2, tzinfo=UTC), Decimal("0.41")),
    ]
    with pytest.raises(PayloadError, match=r"history\[0\]\.p must be within"):
        clob.price_history({"history": [{"t": start, "p": 7}]}, "1", 60)


def test_clob_snapshot_needs_every_outcome_or_records_nothing() -> None:
    market = gamma.market_from_gamma(real_market(0))
    yes, no = token_ids(KEN_SIM)
    quotes = {yes: (Decimal("0.36"), Decimal("0.37")), no: "absent from /books response"}
    snap = clob.clob_snapshot(market, {yes: Decimal("0.365"), no: Decimal("0.635")}, quotes, NOW)
    assert snap.source == "polymarket-clob-mid" and snap.prices == {
        YES: Decimal("0.365"),
        NO: Decimal("0.635"),
    }
    assert snap.bids == {YES: Decimal("0.36")} and snap.asks == {YES: Decimal("0.37")}
    with pytest.raises(PayloadError, match=f"no usable CLOB midpoint for NO \\(token {no}\\): no order book"):
        clob.clob_snapshot(market, {yes: Decimal("0.365"), no: "no order book"}, {}, NOW)
    assert snap.observed_at == NOW
