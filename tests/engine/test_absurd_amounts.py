"""An absurd amount in a decision is that decision's validation error, never a crash of the run.

A scripted line betting ``1e999`` dollars used to pass the script check (a positive number) and
end the replay with InvalidOperation when the ledger rounded it to the micro-dollar.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine

from portfolio import Bet, MidQuotes, Rules
from portfolio.validation import check_actions
from tests.engine.helpers import A, config, replay, stored_decisions, tiny_dataset


@pytest.mark.parametrize("amount", ["1e999", "1e12"])
def test_a_scripted_absurd_amount_is_that_decisions_validation_error(
    engine: Engine, tmp_path: Path, amount: str
) -> None:
    path = tmp_path / "script.jsonl"  # written by hand: a JSON number as large as the user typed it
    path.write_text(
        f'{{"time": "2025-01-01T00:00:00Z", "market_id": "{A}", "outcome": "YES", "amount": {amount}}}\n'
    )
    agents = [
        {"name": "scripted", "kind": "scripted", "path": str(path)},
        {"name": "market", "kind": "market"},
    ]
    result, _ = replay(engine, config(tiny_dataset(tmp_path / "data"), agents))
    assert len(result.rounds) == 2
    first = next(d for d in stored_decisions(engine) if d.agent_id == 1)
    assert (first.status, first.error_kind) == ("rejected", "invalid_actions")
    assert "is out of range (below $1000000000000)" in (first.error or "")


def test_the_rules_check_says_out_of_range_for_any_bettor() -> None:
    quotes = MidQuotes({A: {"YES": Decimal("0.4"), "NO": Decimal("0.6")}})
    legs = check_actions(
        [Bet(A, "YES", Decimal("1e999"))], cash=Decimal(10_000), rules=Rules(), quotes=quotes, positions={}
    )
    assert [str(leg) for leg in legs] == [
        f"leg 1 (bet $1E+999 on 'YES' of {A!r}): amount $1E+999 is out of range (below $1000000000000)"
    ]
