"""Distinct types for the portfolio's quantities and ids, so mypy refuses a price passed as an amount.

Money, prices and share counts are all ``Decimal`` at run time, and ids are all ``str``: nothing
in the values stops a price of 0.40 being spent as $0.40, or a market id being looked up as an
agent. ``NewType`` gives each a name the type checker keeps apart at no run-time cost (the call
is the identity). A value gets its type where it enters the portfolio: the arena and the agents
wrap what they read (``Money(row.cash)``, ``MarketId(entry.market_id)``), the portfolio's own
arithmetic wraps what it computes (``money_down`` returns ``Money``). A ``Money`` is still a
``Decimal`` wherever a plain number is expected (formatting, metrics, storage).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import NewType

Money = NewType("Money", Decimal)
"""Dollars: cash, bet amounts, fees, proceeds, payouts, cost basis, P/L and values."""

Price = NewType("Price", Decimal)
"""Dollars per share of one outcome, in [0, 1]: a quote, a mark, or a settlement's payout per share."""

Shares = NewType("Shares", Decimal)
"""A count of shares of one outcome."""

MarketId = NewType("MarketId", str)
"""A market's arena id (``venue:venue_id``)."""

AgentId = NewType("AgentId", str)
"""The id a ledger and its fills belong to."""


def outcome_prices(prices: Mapping[str, Decimal]) -> dict[str, Price]:
    """A venue's outcome -> price mapping (a snapshot, a book side, a resolution's payouts) as prices."""
    return {outcome: Price(price) for outcome, price in prices.items()}
