"""``object_with_item_texts`` reads a body exactly as ``json.loads`` does, or declines."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markets.http import decode_json, json_with_item_texts
from markets.json_texts import object_with_item_texts

DECODER = json.JSONDecoder()
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(items=st.lists(JSON_VALUES, max_size=4), rest=st.dictionaries(st.text(), JSON_VALUES, max_size=3))
def test_values_and_item_texts_match_json(items: list[object], rest: dict[str, object]) -> None:
    for indent in (None, 2):
        text = json.dumps({**rest, "markets": items}, indent=indent)
        found = object_with_item_texts(text, "markets", DECODER)
        assert found is not None
        body, texts = found
        assert body == json.loads(text)
        assert [json.loads(t) for t in texts] == items


@pytest.mark.parametrize(
    "text",
    [
        '{"markets": [1, 2,]}',  # trailing commas: not JSON
        '{"markets": [1], }',
        '{"markets": [1]} extra',
        '{"markets": [1] "next": 2}',
        '{"other": [1]}',  # no such array
        '{"markets": {"a": 1}}',
        "[1, 2]",
        "",
    ],
)
def test_anything_else_is_declined(text: str) -> None:
    assert object_with_item_texts(text, "markets", DECODER) is None


def test_the_decode_falls_back_to_plain_json() -> None:
    decode = json_with_item_texts("markets")
    assert decode(b'{"markets": [{"a": NaN}]}') == ({"markets": [{"a": "NaN"}]}, ['{"a": NaN}'])
    assert decode(b'{"next": 1}') == ({"next": 1}, None)
    utf16 = '{"markets": [1]}'.encode("utf-16")
    assert decode(utf16) == (decode_json(utf16), None)
    with pytest.raises(json.JSONDecodeError, match="Expecting value"):
        decode(b'{"markets": [1,]}')  # not JSON: the API client retries it
