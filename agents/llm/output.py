"""Strict reading of a model's answer into actions and stated probabilities.

Tolerant about *where* the JSON is (fences, prose: see ``extract``), strict about *what* it is.
Nothing is coerced: a string "100" is not the number 100 (a model that quotes numbers is not
following the format, and guessing would hide it), ``yes`` is not ``YES``, an amount with
fractions of a cent is not rounded, and unknown keys are refused rather than ignored. The bet
and sell rules are ``portfolio.validation.check_actions``, the ledger's own check.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from agents.llm.context import OutputContext
from agents.llm.extract import MAX_RESPONSE_CHARS, JsonObject, NonFinite, json_objects
from portfolio.actions import Action, Bet, Sell
from portfolio.units import MarketId, Money
from portfolio.validation import check_actions

DECISION_KEYS = ("reasoning", "actions", "probabilities")
_LEG_KEYS = {"bet": ("type", "market_id", "outcome", "amount"), "sell": ("type", "position_id", "percent")}
_LIMIT = Decimal(10) ** 15  # no amount, percent or probability is anywhere near this
_CENT = Decimal("0.01")
_SUM_TOLERANCE = Decimal("0.01")
_MAX_PROBLEMS_SHOWN = 10

DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": list(DECISION_KEYS),
    "properties": {
        "reasoning": {"type": "string"},
        "actions": {
            "type": "array",
            "items": {
                "anyOf": [
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": list(_LEG_KEYS["bet"]),
                        "properties": {
                            "type": {"const": "bet"},
                            "market_id": {"type": "string"},
                            "outcome": {"type": "string"},
                            "amount": {"type": "number"},
                        },
                    },
                    {
                        "type": "object",
                        "additionalProperties": False,
                        "required": list(_LEG_KEYS["sell"]),
                        "properties": {
                            "type": {"const": "sell"},
                            "position_id": {"type": "string"},
                            "percent": {"type": "number"},
                        },
                    },
                ]
            },
        },
        "probabilities": {
            "type": "object",
            "additionalProperties": {
                "anyOf": [{"type": "number"}, {"type": "object", "additionalProperties": {"type": "number"}}]
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class ParsedOutput:
    reasoning: str
    actions: tuple[Action, ...]
    probabilities: Mapping[str, Mapping[str, float]]


class InvalidOutput(Exception):
    """The answer is not a valid decision; ``problems`` are one line each, fit to send back to the model."""

    def __init__(self, problems: list[str]) -> None:
        shown = problems[:_MAX_PROBLEMS_SHOWN]
        if len(problems) > len(shown):
            shown.append(f"(and {len(problems) - len(shown)} more problems)")
        super().__init__("; ".join(shown))
        self.problems = shown


def parse_decision(text: str, context: OutputContext) -> ParsedOutput:
    """The one decision in ``text``, or InvalidOutput saying what is wrong.

    Objects without any decision key (a quoted leg, a note) are ignored, and the same decision
    written twice is one decision. Two *different* decision objects are refused even when only
    one of them is valid: a draft and a final, or a bet and a fallback hold, leave the arena to
    guess which was meant, and picking the valid one would turn the answer into a decision the
    model may not have made.
    """
    if len(text) > MAX_RESPONSE_CHARS:
        raise InvalidOutput(
            [f"the answer is {len(text):,} characters long; the limit is {MAX_RESPONSE_CHARS:,}"]
        )
    candidates = json_objects(text)
    if not candidates:
        raise InvalidOutput(["no complete JSON object found in the answer"])
    decisions = [i for i, candidate in enumerate(candidates) if any(k in candidate for k in DECISION_KEYS)]
    if not decisions:
        raise InvalidOutput(["no complete JSON object with the keys reasoning, actions, probabilities found"])
    distinct: list[JsonObject] = []
    for index in decisions:
        if candidates[index] not in distinct:
            distinct.append(candidates[index])
    if len(distinct) > 1:
        raise InvalidOutput(
            [f"the answer holds {len(distinct)} different decision objects; give exactly one JSON object"]
        )
    first = decisions[0]
    reading = _read_decision(candidates[first], context)
    if isinstance(reading, ParsedOutput):
        return reading
    if len(candidates) > 1:
        reading = [f"JSON object {first + 1} of {len(candidates)}: {reading[0]}", *reading[1:]]
    raise InvalidOutput(reading)


def _read_decision(obj: JsonObject, context: OutputContext) -> ParsedOutput | list[str]:
    problems: list[str] = []
    _check_keys(obj, "the answer", DECISION_KEYS, problems)
    reasoning = obj.get("reasoning")
    if "reasoning" in obj and not isinstance(reasoning, str):
        problems.append(f"reasoning: expected a string, got {_kind(reasoning)}")
    actions = _read_actions(obj.get("actions"), problems) if "actions" in obj else ()
    probabilities = (
        _read_probabilities(obj.get("probabilities"), context, problems) if "probabilities" in obj else {}
    )
    if problems:
        return problems
    legs = check_actions(
        actions, cash=context.cash, rules=context.rules, quotes=context.quotes, positions=context.positions
    )
    if legs:
        return [str(leg) for leg in legs]
    assert isinstance(reasoning, str)
    return ParsedOutput(reasoning, actions, probabilities)


def _check_repeats(obj: JsonObject, where: str, problems: list[str]) -> None:
    """A repeated key has two values; the decoder would silently keep the last one."""
    if obj.duplicate_keys:
        problems.append(
            f"{where} repeats the key(s) {', '.join(sorted(_short(k) for k in obj.duplicate_keys))}"
        )


def _check_keys(obj: JsonObject, where: str, expected: tuple[str, ...], problems: list[str]) -> None:
    _check_repeats(obj, where, problems)
    missing = [k for k in expected if k not in obj]
    unknown = [k for k in obj if k not in expected]
    if missing:
        problems.append(f"{where} lacks the key(s) {', '.join(missing)}")
    if unknown:
        listed = ", ".join(_short(k) for k in unknown)
        problems.append(f"{where} has unknown key(s) {listed}; allowed: {', '.join(expected)}")


def _read_actions(value: Any, problems: list[str]) -> tuple[Action, ...]:
    if not isinstance(value, list):
        problems.append(f"actions: expected a list, got {_kind(value)}")
        return ()
    actions: list[Action] = []
    for index, leg in enumerate(value):
        action = _read_leg(leg, f"actions[{index}]", problems)
        if action is not None:
            actions.append(action)
    return tuple(actions)


def _read_leg(leg: Any, where: str, problems: list[str]) -> Action | None:
    if not isinstance(leg, JsonObject):
        problems.append(f"{where}: expected an object, got {_kind(leg)}")
        return None
    kind = leg.get("type")
    if kind not in _LEG_KEYS:
        problems.append(f'{where}.type: expected "bet" or "sell", got {_kind(kind)}')
        return None
    _check_keys(leg, where, _LEG_KEYS[kind], problems)
    if kind == "bet":
        market_id = _text(leg.get("market_id"), f"{where}.market_id", problems)
        outcome = _text(leg.get("outcome"), f"{where}.outcome", problems)
        amount = _amount(leg.get("amount"), f"{where}.amount", problems)
        if market_id is None or outcome is None or amount is None:
            return None
        return Bet(MarketId(market_id), outcome, Money(amount))
    position_id = _text(leg.get("position_id"), f"{where}.position_id", problems)
    percent = _number(leg.get("percent"), f"{where}.percent", problems)
    return None if position_id is None or percent is None else Sell(position_id, percent)


def _read_probabilities(
    value: Any, context: OutputContext, problems: list[str]
) -> dict[str, dict[str, float]]:
    if not isinstance(value, JsonObject):
        problems.append(f"probabilities: expected an object, got {_kind(value)}")
        return {}
    _check_repeats(value, "probabilities", problems)
    stated: dict[str, dict[str, float]] = {}
    for market_id, given in value.items():
        where = f"probabilities[{_short(market_id)}]"
        outcomes = context.outcomes.get(MarketId(market_id))
        if outcomes is None:
            problems.append(f"{where}: not a market of this round's list or your positions")
            continue
        by_outcome = _market_probabilities(given, outcomes, where, problems)
        if by_outcome is not None:
            stated[market_id] = {o: float(p) for o, p in by_outcome.items()}
    return stated


def _market_probabilities(
    given: Any, outcomes: tuple[str, ...], where: str, problems: list[str]
) -> dict[str, Decimal] | None:
    if not isinstance(given, JsonObject):
        if outcomes != ("YES", "NO"):
            problems.append(f"{where}: this market has outcomes {list(outcomes)}; give an object by outcome")
            return None
        given = JsonObject({"YES": given})
    _check_repeats(given, where, problems)
    values: dict[str, Decimal] = {}
    for outcome, raw in given.items():
        at = f"{where}[{_short(outcome)}]"
        number = _number(raw, at, problems)
        if outcome not in outcomes:
            problems.append(f"{at}: not an outcome of this market; expected one of {list(outcomes)}")
        elif number is not None and not Decimal(0) <= number <= Decimal(1):
            problems.append(f"{at}: a probability must lie in [0, 1], got {number}")
        elif number is not None:
            values[outcome] = number
    total = sum(values.values(), Decimal(0))
    if total > 1 + _SUM_TOLERANCE or (len(values) == len(outcomes) and total < 1 - _SUM_TOLERANCE):
        problems.append(
            f"{where}: probabilities add up to {total}; expected at most 1 (exactly 1 if all are given)"
        )
    return values


def _text(value: Any, where: str, problems: list[str]) -> str | None:
    if isinstance(value, str) and value:
        return value
    problems.append(f"{where}: expected a non-empty string, got {_kind(value)}")
    return None


def _number(value: Any, where: str, problems: list[str]) -> Decimal | None:
    if isinstance(value, NonFinite):
        problems.append(f"{where}: {value.literal} is not a number")
    elif not isinstance(value, Decimal):
        problems.append(f"{where}: expected a JSON number, got {_kind(value)}")
    elif abs(value) >= _LIMIT:
        problems.append(f"{where}: {_short(str(value))} is out of range")
    else:
        return value
    return None


def _amount(value: Any, where: str, problems: list[str]) -> Decimal | None:
    """Dollars to the cent: an amount with fractions of a cent is refused, never rounded."""
    number = _number(value, where, problems)
    if number is not None and number != number.quantize(_CENT):
        problems.append(f"{where}: {number} has fractions of a cent; give dollars with at most two decimals")
        return None
    return number


def _kind(value: Any) -> str:
    """How a wrong value is named in an error: its JSON type and a short rendering."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {_short(value)}"
    if isinstance(value, NonFinite):
        return value.literal
    if isinstance(value, Decimal):
        return f"the number {_short(str(value))}"
    return "an object" if isinstance(value, dict) else "a list"


def _short(text: str, limit: int = 60) -> str:
    shown = text if len(text) <= limit else text[:limit] + "…"
    return repr(shown)
