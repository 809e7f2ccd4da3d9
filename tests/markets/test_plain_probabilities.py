"""``plain_probabilities`` gives what ``probability`` gives, or declines so that it can say why."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from markets.http import PayloadError, plain_probabilities, probability

UNIT_DECIMALS = st.decimals(min_value=0, max_value=1, places=6).map(str)


@given(st.lists(UNIT_DECIMALS, max_size=5))
def test_decimal_strings_read_as_probability_reads_them(values: list[str]) -> None:
    assert plain_probabilities(values) == [probability(v, where="w", field="f") for v in values]


@pytest.mark.parametrize(
    "values",
    [["0.5", 0.5], ["0.5", "1.01"], ["-0.1"], ["NaN"], ["Infinity"], ["abc"], [None], ["0.5", True]],
)
def test_anything_else_is_left_to_probability(values: list[object]) -> None:
    assert plain_probabilities(values) is None
    readable = []
    for value in values:
        try:
            readable.append(probability(value, where="w", field="f"))
        except PayloadError:
            break
    else:  # a float is valid, but rounded by probability's own rule
        assert readable == [Decimal("0.5"), Decimal("0.5")]
