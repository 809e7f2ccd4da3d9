"""A listing page read as its items' named fields and bytes as sent, or declined for the whole decode."""

from __future__ import annotations

import json
from typing import Any, TypedDict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markets.http import PayloadError, decode_json
from markets.listing_items import read_items
from markets.polymarket import gamma
from markets.polymarket.client import _listing_page, _page
from tests.fakes.polymarket_server import real_market

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


class Named(TypedDict, total=False):
    a: Any
    b: Any


@given(
    items=st.lists(st.dictionaries(st.sampled_from(["a", "b", "c", "é"]), JSON_VALUES), max_size=4),
    cursor=st.none() | st.text(),
)
def test_items_are_their_named_fields_and_their_json_as_sent(
    items: list[dict[str, Any]], cursor: str | None
) -> None:
    for indent in (None, 2):
        content = json.dumps({"markets": items, "next_cursor": cursor, "x": 1}, indent=indent).encode()
        found = read_items(content, "markets", Named)
        assert found is not None
        assert [json.loads(sent) for sent in found.sent] == items
        assert found.fields == [{k: v for k, v in item.items() if k in ("a", "b")} for item in items]
        assert found.next_cursor == cursor


@pytest.mark.parametrize(
    "content",
    [
        b'{"markets": [{"a": NaN}]}',  # not JSON: the whole decode keeps NaN as its text
        b'{"markets": [{"a": -Infinity}]}',
        b'{"markets": [1, 2]}',  # items that are not objects
        b'{"markets": [{"a": 1},]}',  # a trailing comma
        b'{"markets": {"a": 1}}',
        b'{"other": []}',
        b"[1]",
        b"",
        '{"markets": [{"a": "é"}]}'.encode("utf-16"),
    ],
)
def test_any_other_body_is_declined(content: bytes) -> None:
    assert read_items(content, "markets", Named) is None


def test_a_gamma_listing_holds_the_listing_fields_and_decodes_a_market_whole_from_its_bytes() -> None:
    markets = [real_market(0), real_market(1)]
    content = json.dumps({"markets": markets, "next_cursor": "abc"}).encode()
    page, cursor = _page(_listing_page("markets", content), "/markets/keyset", "markets")
    assert cursor == "abc" and page.sent is not None
    assert [decode_json(sent) for sent in page.sent] == markets
    assert set(page[0]) == set(gamma.ListingFields.__annotations__) & set(markets[0])
    assert gamma.market_key_of(page[0]) == gamma.market_key_of(markets[0])
    assert gamma.close_time(page[0]) == gamma.close_time(markets[0])
    assert gamma.liquidity(page[0]) == gamma.liquidity(markets[0])
    assert gamma.price_values(page[0], 2) == gamma.price_values(markets[0], 2)


def test_a_body_read_whole_is_checked_as_before() -> None:
    page, cursor = _page(_listing_page("markets", b'{"markets": [{"a": NaN}]}'), "/markets/keyset", "markets")
    assert page == [{"a": "NaN"}] and page.sent is None and cursor is None
    with pytest.raises(PayloadError, match="every entry of 'markets' must be an object"):
        _page(_listing_page("markets", b'{"markets": [1]}'), "/markets/keyset", "markets")
    with pytest.raises(ValueError, match="Expecting value"):
        _listing_page("markets", b'{"markets": [1,]}')  # not JSON: the API client retries it
