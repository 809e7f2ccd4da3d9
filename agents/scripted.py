"""scripted: replay decisions made elsewhere from a JSONL file, so outside forecasts are scored.

One JSON object per line, one action or forecast per line:

    {"time": "2025-03-01T00:00:00Z", "market_id": "polymarket:0x1", "outcome": "YES", "amount": 200,
     "probability": 0.62}
    {"time": "2025-03-08T00:00:00Z", "position_id": "p-17", "percent": 50}

A market line bets ``amount`` on ``outcome`` and/or states ``probability`` for it (at least one of
the two). A line dated ``t`` applies to exactly one round: the first whose decision time is at or
after ``t``, i.e. the round with ``previous_round_at < t <= now`` (the first round takes every line
dated at or before it). Because the windows of successive rounds do not overlap, a line can never
apply twice, and a re-run of a round replays the same lines without keeping any state.

The whole file is checked when it is loaded; the first bad line fails with ``file:line: field:
what was expected``. Actions are replayed as written: if one breaks the rules the arena records
the decision as invalid, exactly as it would for any other bettor.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, model_validator

from agents.types import AgentView, Decision
from markets.types import NO, YES
from portfolio.actions import Action, Bet, Sell
from portfolio.units import MarketId, Money


class ScriptError(ValueError):
    """A scripted-decisions file that cannot be used; the message names file, line and field."""


class ScriptedSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path = Field(description="JSONL file of decisions")


class _MarketLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    time: AwareDatetime
    market_id: str = Field(min_length=1)
    outcome: str = Field(min_length=1)
    amount: Decimal | None = Field(None, gt=0)
    probability: Decimal | None = Field(None, ge=0, le=1)

    @model_validator(mode="after")
    def _acts(self) -> _MarketLine:
        if self.amount is None and self.probability is None:
            raise ValueError("expected 'amount' (a bet), 'probability' (a forecast) or both")
        return self


class _SellLine(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    time: AwareDatetime
    position_id: str = Field(min_length=1)
    percent: Decimal = Field(gt=0, le=100)


@dataclass(frozen=True, slots=True)
class ScriptLine:
    """One parsed line: an action, a stated probability of ``outcome`` of ``market_id``, or both."""

    line_no: int
    time: datetime
    action: Action | None
    market_id: str | None = None
    outcome: str | None = None
    probability: Decimal | None = None


def load_script(path: Path) -> tuple[ScriptLine, ...]:
    """Parse and check every line of ``path``; blank lines are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"{path}: cannot read scripted decisions: {exc.strerror}") from exc
    lines = tuple(
        _parse_line(path, number, raw) for number, raw in enumerate(text.splitlines(), start=1) if raw.strip()
    )
    if not lines:
        raise ScriptError(f"{path}: no decisions (expected one JSON object per line)")
    return lines


def _parse_line(path: Path, number: int, raw: str) -> ScriptLine:
    where = f"{path}:{number}"
    try:
        data: Any = json.loads(raw, parse_float=Decimal)
    except json.JSONDecodeError as exc:
        raise ScriptError(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise ScriptError(f"{where}: expected a JSON object, got {type(data).__name__}")
    try:
        if "position_id" in data:
            sell = _SellLine.model_validate(data)
            return ScriptLine(number, sell.time.astimezone(UTC), Sell(sell.position_id, sell.percent))
        bet = _MarketLine.model_validate(data)
    except ValidationError as exc:
        raise ScriptError(f"{where}: {_first_error(exc)}") from exc
    action = None if bet.amount is None else Bet(MarketId(bet.market_id), bet.outcome, Money(bet.amount))
    return ScriptLine(number, bet.time.astimezone(UTC), action, bet.market_id, bet.outcome, bet.probability)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return (
            f"unknown field {field!r} (a market line has time, market_id, outcome, amount, probability; "
            "a sell line has time, position_id, percent)"
        )
    if not field:
        return str(error["msg"]).removeprefix("Value error, ")
    return f"field {field!r}: {error['msg']}"


class ScriptedBettor:
    """scripted: replays the lines of a JSONL file, each in the first round at or after its time."""

    uses_peers = False

    def __init__(self, name: str, path: Path, lines: tuple[ScriptLine, ...]) -> None:
        self.name = name
        self.path = path
        self.lines = lines

    @classmethod
    def from_settings(cls, name: str, settings: ScriptedSettings) -> ScriptedBettor:
        return cls(name, settings.path, load_script(settings.path))

    def due(self, view: AgentView) -> list[ScriptLine]:
        """Lines dated in (previous round, this round]; every line dated up to it in the first round."""
        after = view.previous_round_at
        return [line for line in self.lines if (after is None or line.time > after) and line.time <= view.now]

    async def decide(self, view: AgentView) -> Decision:
        if view.previous_round_at is None and view.round_index > 0:
            return Decision(
                error=f"scripted: round {view.round_index} has no previous_round_at; cannot tell which "
                "lines are due without replaying earlier ones twice",
                error_kind="config",
            )
        due = self.due(view)
        binary = {e.market.market_id for e in view.snapshot.entries if e.market.is_binary}
        probabilities: dict[str, dict[str, float]] = {}
        for line in sorted(due, key=lambda ln: (ln.time, ln.line_no)):  # the latest forecast wins
            if line.probability is None or line.market_id is None or line.outcome is None:
                continue
            if line.market_id in binary and line.outcome == NO:
                probabilities[line.market_id] = {YES: float(1 - line.probability)}
            else:
                probabilities.setdefault(line.market_id, {})[line.outcome] = float(line.probability)
        actions = tuple(line.action for line in due if line.action is not None)
        numbers = ", ".join(str(line.line_no) for line in due) or "none"
        return Decision(
            actions=actions,
            probabilities=probabilities,
            reasoning=f"scripted: {self.path.name} lines {numbers}",
        )
