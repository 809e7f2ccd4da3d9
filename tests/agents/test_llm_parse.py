"""Reading model answers: tolerant about where the JSON is, strict about what it says."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.llm.context import OutputContext
from agents.llm.extract import MAX_RESPONSE_CHARS, NonFinite, json_objects
from agents.llm.output import InvalidOutput, ParsedOutput, parse_decision
from agents.llm.prompt import render_prompt
from agents.llm.settings import LLMSettings
from portfolio.actions import Bet, Sell
from tests.agents.corpus.world import (
    CLOSED_POSITION,
    ELECTION,
    FED,
    FOREIGN_POSITION,
    OWN_POSITION,
    RAIN,
    SETTLED_PRICE,
    entry,
    market,
    valid_answer,
    view,
)


def context(**kwargs: Any) -> OutputContext:
    agent_view = view(**kwargs)
    return OutputContext.for_view(agent_view, render_prompt(agent_view, LLMSettings(model="m")).markets)


def parse(text: str, **kwargs: Any) -> ParsedOutput:
    return parse_decision(text, context(**kwargs))


def problems(text: str, **kwargs: Any) -> str:
    with pytest.raises(InvalidOutput) as caught:
        parse(text, **kwargs)
    return str(caught.value)


def answer(**changes: Any) -> dict[str, Any]:
    data = valid_answer()
    data.update(changes)
    return data


def with_leg(leg: dict[str, Any]) -> str:
    return json.dumps(answer(actions=[leg]))


EXPECTED = ParsedOutput(
    reasoning=str(valid_answer()["reasoning"]),
    actions=(
        Bet(FED, "NO", Decimal("300")),
        Bet(ELECTION, "Bob", Decimal("120.5")),
        Sell(OWN_POSITION, Decimal("25")),
    ),
    probabilities={
        FED: {"YES": 0.2},
        ELECTION: {"Alice": 0.45, "Bob": 0.35, "Carol": 0.2},
        RAIN: {"YES": 0.5},
    },
)


@pytest.mark.parametrize(
    "wrap",
    [
        "{}",
        "```json\n{}\n```",
        "``` json\n{}\n```",
        "Here is my decision:\n\n```\n{}\n```\nGood luck!",
        "````markdown\n```json\n{}\n```\n````",
        "I considered {several} options, e.g. {maybe: a}. Final answer: {} -- done {",
        'He said "hi and { then: {}',
        "<answer>{}</answer>",
    ],
)
def test_the_answer_is_found_in_fences_and_prose(wrap: str) -> None:
    assert parse(wrap.replace("{}", json.dumps(valid_answer()), 1)) == EXPECTED


def test_braces_and_quotes_inside_strings_do_not_confuse_the_parser() -> None:
    data = answer(reasoning='A "quoted" } brace, a { and a ``` fence: {"actions": []}')
    assert parse("```json\n" + json.dumps(data, indent=2) + "\n```").reasoning == data["reasoning"]


def test_the_same_answer_twice_is_one_answer_but_two_different_ones_are_refused() -> None:
    one = json.dumps(valid_answer())
    assert parse(f"{one}\n\nAgain: {one}") == EXPECTED
    other = json.dumps(answer(actions=[]))
    assert "2 different decision objects" in problems(f"{one}\n{other}")


def test_objects_that_are_not_decisions_are_ignored() -> None:
    text = 'Format: {"type": "bet"}. Note: {"cash": 1}. Answer: ' + json.dumps(valid_answer())
    assert parse(text) == EXPECTED


@pytest.mark.parametrize(
    "other",
    [
        {"reasoning": 1},  # a broken draft
        answer(actions=[{"type": "bet", "market_id": FED, "outcome": "NO", "amount": 5000}]),  # over max
        answer(
            actions=[{"type": "bet", "market_id": "polymarket:0x123abc", "outcome": "YES", "amount": 250}]
        ),
    ],
    ids=["broken-draft", "invalid-first-choice", "format-example"],
)
def test_an_invalid_decision_beside_a_valid_one_is_ambiguous_not_skipped(other: dict[str, Any]) -> None:
    """The valid object is not picked out: the model may have meant the other one."""
    valid = json.dumps(valid_answer())
    for text in (f"{json.dumps(other)}\nOr: {valid}", f"{valid}\nOr: {json.dumps(other)}"):
        assert "2 different decision objects" in problems(text)


def test_no_json_and_truncated_json_are_reported() -> None:
    assert "no complete JSON object" in problems("I will hold this round.")
    assert "no complete JSON object" in problems(json.dumps(valid_answer())[:-1])


def test_errors_name_the_object_closest_to_a_decision() -> None:
    text = '{"note": 1} ' + json.dumps(answer(reasoning=5))
    assert problems(text).startswith("JSON object 2 of 2: reasoning: expected a string, got the number '5'")


@pytest.mark.parametrize(
    ("amount", "message"),
    [
        ('"300"', "expected a JSON number, got the string '300'"),
        ("true", "expected a JSON number, got true"),
        ("null", "expected a JSON number, got null"),
        ("[300]", "expected a JSON number, got a list"),
        ("NaN", "NaN is not a number"),
        ("Infinity", "Infinity is not a number"),
        ("-Infinity", "-Infinity is not a number"),
        ("1e400", "is out of range"),
        ("9" * 5000, "is out of range"),
        ("300.001", "has fractions of a cent"),
        ("0", "below the minimum bet"),
        ("-100", "below the minimum bet"),
        ("49.99", "below the minimum bet"),
        ("2500.01", "above the maximum bet"),
        ('"３００"', "got the string '３００'"),
    ],
)
def test_bad_amounts_are_refused_never_coerced(amount: str, message: str) -> None:
    text = with_leg({"type": "bet", "market_id": FED, "outcome": "NO", "amount": 0}).replace(
        '"amount": 0', f'"amount": {amount}'
    )
    assert message in problems(text)


def test_fullwidth_digits_are_not_a_json_number() -> None:
    assert json_objects('{"amount": ３００}') == []


def test_non_finite_literals_decode_to_markers_not_floats() -> None:
    (obj,) = json_objects('{"a": NaN, "b": 1.10}')
    assert obj == {"a": NonFinite("NaN"), "b": Decimal("1.10")}


@pytest.mark.parametrize(
    ("leg", "message"),
    [
        ({"type": "bet", "market_id": "polymarket:nope", "outcome": "YES", "amount": 100}, "unknown market"),
        (
            {"type": "bet", "market_id": "polymarket:fed-cut ", "outcome": "YES", "amount": 100},
            "unknown market",
        ),
        (
            {"type": "bet", "market_id": "polymarket:fеd-cut", "outcome": "YES", "amount": 100},
            "unknown market",
        ),
        (
            {"type": "bet", "market_id": "polymarket:fed\u200b-cut", "outcome": "YES", "amount": 100},
            "unknown",
        ),
        ({"type": "bet", "market_id": FED, "outcome": "yes", "amount": 100}, "'yes' is not an outcome"),
        (
            {"type": "bet", "market_id": ELECTION, "outcome": "Dave", "amount": 100},
            "'Dave' is not an outcome",
        ),
        (
            {"type": "bet", "market_id": SETTLED_PRICE, "outcome": "NO", "amount": 100},
            "strictly between 0 and 1",
        ),
        ({"type": "sell", "position_id": FOREIGN_POSITION, "percent": 50}, "not an open position"),
        ({"type": "sell", "position_id": CLOSED_POSITION, "percent": 50}, "not open for trading"),
        ({"type": "sell", "position_id": OWN_POSITION, "percent": 0}, "percent must be a number in (0, 100]"),
        ({"type": "sell", "position_id": OWN_POSITION, "percent": 100.5}, "(0, 100]"),
        ({"type": "sell", "position_id": OWN_POSITION, "percent": "50"}, "got the string '50'"),
        ({"type": "BET", "market_id": FED, "outcome": "NO", "amount": 100}, 'expected "bet" or "sell"'),
        (
            {"type": "bet", "market_id": FED, "outcome": "NO", "amount": 100, "note": "x"},
            "unknown key(s) 'note'",
        ),
        ({"type": "bet", "market_id": FED, "amount": 100}, "lacks the key(s) outcome"),
        ({"type": "bet", "market_id": 7, "outcome": "NO", "amount": 100}, "expected a non-empty string"),
        ("bet", "expected an object, got the string 'bet'"),
    ],
)
def test_bad_legs_are_refused(leg: Any, message: str) -> None:
    assert message in problems(with_leg(leg))


def test_an_outcome_without_a_price_cannot_be_bet_on() -> None:
    only_yes = (entry(market("fed-cut", "Q?"), {"YES": "0.25"}),)
    leg = {"type": "bet", "market_id": FED, "outcome": "NO", "amount": 100}
    text = json.dumps({"reasoning": "r", "actions": [leg], "probabilities": {}})
    assert "no price for 'NO'" in problems(text, snapshot_entries=only_yes, held=())


def test_duplicate_and_contradicting_legs_are_refused() -> None:
    bet = {"type": "bet", "market_id": FED, "outcome": "NO", "amount": 100}
    assert "again" in problems(json.dumps(answer(actions=[bet, bet])))
    sell = {"type": "sell", "position_id": OWN_POSITION, "percent": 10}
    assert "again" in problems(json.dumps(answer(actions=[sell, sell])))
    buy_rain = {"type": "bet", "market_id": RAIN, "outcome": "YES", "amount": 100}
    assert "do one or the other" in problems(json.dumps(answer(actions=[sell, buy_rain])))


def test_bets_together_may_not_exceed_cash() -> None:
    legs = [
        {"type": "bet", "market_id": m, "outcome": o, "amount": 110}
        for m, o in [(FED, "YES"), (FED, "NO"), (RAIN, "NO"), (ELECTION, "Alice"), (ELECTION, "Bob")]
    ]
    assert "more than the cash" in problems(json.dumps(answer(actions=legs, probabilities={})), cash="500")


def test_repeated_keys_are_refused_rather_than_last_one_wins() -> None:
    text = json.dumps(answer(actions=[])).replace('"actions": []', '"actions": [], "actions": []')
    assert "repeats the key(s) 'actions'" in problems(text)
    leg = (
        json.dumps({"type": "bet", "market_id": FED, "outcome": "NO", "amount": 100})[:-1]
        + ', "amount": 2000}'
    )
    assert "repeats the key(s) 'amount'" in problems(json.dumps(answer(actions=[])).replace("[]", f"[{leg}]"))


def test_top_level_shape_is_exact() -> None:
    assert "lacks the key(s) probabilities" in problems(json.dumps({"reasoning": "r", "actions": []}))
    assert "unknown key(s) 'confidence'" in problems(json.dumps(answer(confidence=0.9)))
    assert "actions: expected a list" in problems(json.dumps(answer(actions={"type": "bet"})))


@pytest.mark.parametrize(
    ("probabilities", "message"),
    [
        ({FED: 1.2}, "must lie in [0, 1]"),
        ({FED: -0.1}, "must lie in [0, 1]"),
        ({FED: "0.3"}, "got the string '0.3'"),
        ({FED: {"YES": 0.7, "NO": 0.7}}, "add up to 1.4"),
        ({FED: {"YES": 0.2, "NO": 0.2}}, "add up to 0.4"),
        ({FED: {"yes": 0.7}}, "not an outcome of this market"),
        ({ELECTION: 0.5}, "give an object by outcome"),
        ({ELECTION: {"Alice": 0.6, "Bob": 0.6}}, "add up to 1.2"),
        ({"polymarket:unknown": 0.5}, "not a market of this round"),
        ([0.5], "probabilities: expected an object, got a list"),
    ],
)
def test_bad_probabilities_are_refused(probabilities: Any, message: str) -> None:
    assert message in problems(json.dumps(answer(probabilities=probabilities)))


def test_probabilities_may_be_partial_and_are_returned_per_outcome() -> None:
    parsed = parse(json.dumps(answer(actions=[], probabilities={ELECTION: {"Bob": 0.25}, FED: 0})))
    assert parsed.probabilities == {ELECTION: {"Bob": 0.25}, FED: {"YES": 0.0}}


def test_oversized_answers_are_refused_before_parsing() -> None:
    junk = "x" * MAX_RESPONSE_CHARS + json.dumps(valid_answer())
    assert "limit is 100,000" in problems(junk)


def test_hidden_prices_still_check_everything_but_the_price() -> None:
    assert parse(json.dumps(valid_answer()), prices_visible=False) == EXPECTED
    bet = {"type": "bet", "market_id": FED, "outcome": "NO", "amount": 3000}
    assert "above the maximum bet" in problems(with_leg(bet), prices_visible=False)


PROSE = st.text(st.characters(blacklist_categories=["Cs"]), max_size=200)


@settings(max_examples=200, deadline=None)
@given(before=PROSE, after=PROSE)
def test_any_prose_around_the_answer_yields_the_answer_or_a_clear_refusal(before: str, after: str) -> None:
    """Prose never produces a different decision; it can only make the answer ambiguous."""
    text = before + json.dumps(valid_answer()) + after
    try:
        assert parse(text) == EXPECTED
    except InvalidOutput as invalid:  # refusing is allowed, not required, so pytest.raises cannot say it
        assert "different decision objects" in str(invalid)  # noqa: PT017


@settings(max_examples=100, deadline=None)
@given(before=st.text(alphabet='{}" :,[]\\ab\n', max_size=40))
def test_brace_and_quote_noise_before_the_answer_does_not_hide_it(before: str) -> None:
    assert parse(before + "\n" + json.dumps(valid_answer())) == EXPECTED
