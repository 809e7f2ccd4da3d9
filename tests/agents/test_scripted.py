"""Scripted decisions: file parsing, errors naming file:line:field, and which round a line lands in."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from agents.scripted import ScriptedBettor, ScriptError, load_script
from agents.types import Decision
from portfolio.actions import Bet, Sell
from tests.agents.test_baselines_builders import T0, decide, entry, pm, view

DAY = timedelta(days=1)
ROUNDS = [T0, T0 + 7 * DAY, T0 + 14 * DAY]  # decision times of rounds 0, 1, 2


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "decisions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _round(bettor: ScriptedBettor, index: int) -> Decision:
    previous = ROUNDS[index - 1] if index else None
    agent_view = view(
        entry("a", "0.5"),
        entry("multi", outcomes=("X", "Y"), prices={"X": "0.4", "Y": "0.6"}),
        now=ROUNDS[index],
        round_index=index,
        previous_round_at=previous,
    )
    return decide(bettor, agent_view)


SCRIPT = [
    json.dumps(
        {
            "time": "2025-02-20T00:00:00Z",
            "market_id": "polymarket:a",
            "outcome": "YES",
            "amount": 200,
            "probability": 0.62,
        }
    ),
    "",
    json.dumps({"time": "2025-03-08T00:00:00Z", "position_id": "p-1", "percent": 50}),  # exactly round 1
    json.dumps(
        {
            "time": "2025-03-01T00:00:01+00:00",
            "market_id": "polymarket:a",
            "outcome": "NO",
            "probability": 0.3,
        }
    ),
    # 23:00Z the day before round 1
    json.dumps(
        {
            "time": "2025-03-08T01:00:00+02:00",
            "market_id": "polymarket:multi",
            "outcome": "Y",
            "amount": 75.25,
        }
    ),
    # after the last round: never applies
    json.dumps({"time": "2025-03-31T00:00:00Z", "market_id": "polymarket:a", "outcome": "YES", "amount": 60}),
]


def test_each_line_applies_to_the_first_round_at_or_after_its_time_exactly_once(tmp_path: Path) -> None:
    lines = load_script(_write(tmp_path, *SCRIPT))
    bettor = ScriptedBettor("s", tmp_path / "decisions.jsonl", lines)
    r0, r1, r2 = (_round(bettor, i) for i in range(3))
    assert r0.actions == (Bet(pm("a"), "YES", Decimal(200)),)  # dated before the first round
    assert r0.probabilities == {pm("a"): {"YES": 0.62}}
    assert r1.actions == (Sell("p-1", Decimal(50)), Bet(pm("multi"), "Y", Decimal("75.25")))
    assert r1.probabilities == {pm("a"): {"YES": 0.7}}  # a NO forecast on a binary market, as P(YES)
    assert r2.actions == () and r2.probabilities == {}
    assert "lines 1" in r0.reasoning and "lines 3, 4, 5" in r1.reasoning
    assert _round(bettor, 1) == r1  # re-running a round replays the same lines, no state kept


def test_the_latest_forecast_of_a_round_wins(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '{"time": "2025-03-05T00:00:00Z", "market_id": "polymarket:a", "outcome": "YES", "probability": 0.9}',
        '{"time": "2025-03-03T00:00:00Z", "market_id": "polymarket:a", "outcome": "YES", "probability": 0.1}',
    )
    bettor = ScriptedBettor("s", path, load_script(path))
    assert _round(bettor, 1).probabilities == {pm("a"): {"YES": 0.9}}


def test_a_later_round_without_previous_round_time_is_an_error_not_a_double_replay(tmp_path: Path) -> None:
    path = _write(tmp_path, *SCRIPT)
    bettor = ScriptedBettor("s", path, load_script(path))
    decision = decide(bettor, view(entry("a", "0.5"), now=ROUNDS[1], round_index=1))
    assert decision.is_error and decision.actions == ()
    assert "previous_round_at" in (decision.error or "")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", ":2: not valid JSON"),
        ("[1, 2]", ":2: expected a JSON object, got list"),
        (
            '{"time": "2025-03-01T00:00:00", "market_id": "m", "outcome": "YES", "amount": 5}',
            ":2: field 'time': Input should have timezone info",
        ),
        ('{"market_id": "m", "outcome": "YES", "amount": 5}', ":2: field 'time': Field required"),
        (
            '{"time": "2025-03-01T00:00:00Z", "market_id": "m", "outcome": "YES", "amount": -5}',
            ":2: field 'amount': Input should be greater than 0",
        ),
        (
            '{"time": "2025-03-01T00:00:00Z", "market_id": "m", "outcome": "YES", "probability": 1.2}',
            ":2: field 'probability': Input should be less than or equal to 1",
        ),
        (
            '{"time": "2025-03-01T00:00:00Z", "market_id": "m", "outcome": "YES"}',
            ":2: expected 'amount' (a bet), 'probability' (a forecast) or both",
        ),
        (
            '{"time": "2025-03-01T00:00:00Z", "market_id": "m", "outcome": "YES", "amonut": 5}',
            ":2: unknown field 'amonut'",
        ),
        (
            '{"time": "2025-03-01T00:00:00Z", "position_id": "p", "percent": 150}',
            ":2: field 'percent': Input should be less than or equal to 100",
        ),
        ('{"time": "2025-03-01T00:00:00Z", "position_id": "p"}', ":2: field 'percent': Field required"),
    ],
)
def test_bad_lines_fail_at_load_naming_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = _write(tmp_path, SCRIPT[0], line)
    with pytest.raises(ScriptError) as raised:
        load_script(path)
    assert str(raised.value).startswith(f"{path}{message}")


def test_empty_and_missing_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="no decisions"):
        load_script(_write(tmp_path, "", "  "))
    with pytest.raises(ScriptError, match="cannot read"):
        load_script(tmp_path / "absent.jsonl")


def test_amounts_are_exact_decimals(tmp_path: Path) -> None:
    path = _write(
        tmp_path, '{"time": "2025-03-01T00:00:00Z", "market_id": "m", "outcome": "YES", "amount": 0.1}'
    )
    (line,) = load_script(path)
    assert line.action == Bet("m", "YES", Decimal("0.1"))
