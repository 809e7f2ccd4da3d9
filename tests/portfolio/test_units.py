"""The portfolio's unit types are only worth having if mypy refuses a mix-up: run mypy and see it do so.

Each case is a snippet of a caller's code; mypy (strict, as the package is checked) must pass the
correct call and reject the mixed-up one with the error naming both types.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

import portfolio

REPO = Path(portfolio.__file__).resolve().parent.parent

HEADER = """\
from datetime import UTC, datetime
from decimal import Decimal

from portfolio import AgentId, Bet, Ledger, MarketId, Money, Price, Rules, Shares
from portfolio.positions import gross_proceeds

market = MarketId("polymarket:will-it-rain")
agent = AgentId("alice")
price = Price(Decimal("0.40"))
amount = Money(Decimal("100"))
shares = Shares(Decimal("250"))
ledger = Ledger(Rules(), agent)
"""

CASES = [
    # (correct call, mixed-up call, the error mypy must report for the mix-up)
    (
        "Bet(market, 'YES', amount)",
        "Bet(market, 'YES', price)",
        'Argument 3 to "Bet" has incompatible type "Price"; expected "Money"',
    ),
    (
        "gross_proceeds(shares, price)",
        "gross_proceeds(price, shares)",
        'Argument 1 to "gross_proceeds" has incompatible type "Price"; expected "Shares"',
    ),
    (
        "ledger.open_positions(market)",
        "ledger.open_positions(agent)",
        'Argument 1 to "open_positions" of "Ledger" has incompatible type "AgentId"; '
        'expected "MarketId | None"',
    ),
    (
        "ledger.settle(market, {'YES': price}, datetime.now(UTC))",
        "ledger.settle(market, {'YES': amount}, datetime.now(UTC))",
        'Dict entry 0 has incompatible type "str": "Money"; expected "str": "Price"',
    ),
]


def _mypy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> tuple[str, int]:
    """mypy --strict on ``body`` after the header, importing this checkout's ``portfolio``."""
    snippet = tmp_path / "caller.py"
    snippet.write_text(HEADER + body + "\n")
    monkeypatch.setenv("MYPYPATH", str(REPO))  # this checkout, not whatever is installed
    out, err, status = api.run(
        [str(snippet), "--strict", "--config-file", "", "--cache-dir", str(tmp_path / "cache")]
    )
    return out + err, status


def test_mypy_refuses_a_price_as_money_shares_as_price_and_an_agent_as_a_market(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    correct = "\n".join(right for right, _, _ in CASES)
    report, status = _mypy(tmp_path, monkeypatch, correct)
    assert status == 0, report  # the well-typed calls pass: the errors below are the mix-ups only

    mixed = "\n".join(wrong for _, wrong, _ in CASES)
    report, status = _mypy(tmp_path, monkeypatch, mixed)
    assert status == 1
    first = HEADER.count("\n") + 1
    for line, (_, _, error) in enumerate(CASES, start=first):
        assert f"caller.py:{line}: error: {error}" in report, report
