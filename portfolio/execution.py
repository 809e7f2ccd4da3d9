"""Turning one validated leg into the ``Fill`` it produces (pure; the ledger applies it).

Validation (``portfolio.validation``) decides *whether* a leg may execute; this module decides
*what* it executes to, using the formulas in ``portfolio.positions`` so that planning, applying
and replaying a fill compute the same numbers.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from portfolio.actions import Bet, Sell
from portfolio.fills import Fill, FillKind
from portfolio.money import (
    HUNDRED,
    ZERO,
    div,
    is_decimal,
    is_tradable_price,
    money_down,
    money_up,
    mul,
    shares_down,
)
from portfolio.positions import Position, basis_released, gross_proceeds, shares_bought
from portfolio.quotes import Quotes, Side
from portfolio.units import AgentId, MarketId, Money, Price, Shares


def bet_amount(bet: Bet) -> Money:
    """The dollars a bet spends: its amount truncated to the micro-dollar (the ledger's precision)."""
    return money_down(Decimal(bet.amount))


def trade_fee(
    quotes: Quotes, market_id: MarketId, outcome: str, side: Side, notional: Money, price: Price
) -> Money:
    """The quotes' fee for a trade, rounded up to the micro-dollar; a broken fee model is an error."""
    fee = quotes.fee(market_id, outcome, side, notional, price)
    if not is_decimal(fee) or fee < 0:
        raise ValueError(
            f"fee model returned {fee!r} for {side.value} {outcome!r} of {market_id!r}; expected >= 0"
        )
    return money_up(Decimal(fee))


def shares_to_sell(held: Shares, percent: Decimal) -> Shares:
    """Shares a sell of ``percent`` of ``held`` moves: all of them at 100%, else truncated."""
    return held if percent == HUNDRED else shares_down(div(mul(held, Decimal(percent)), HUNDRED))


def buy_fill(
    bet: Bet,
    *,
    quotes: Quotes,
    agent_id: AgentId,
    position_id: str,
    max_bet: Money,
    leg: int,
    decision_id: str | None,
    at: datetime,
) -> Fill:
    """The BUY a validated bet executes to; the fee comes out of the amount."""
    price = _tradable_price(quotes, bet.market_id, bet.outcome, Side.BUY)
    amount = bet_amount(bet)
    fee = trade_fee(quotes, bet.market_id, bet.outcome, Side.BUY, amount, price)
    return Fill(
        decision_id=decision_id,
        leg_index=leg,
        agent_id=agent_id,
        market_id=bet.market_id,
        outcome=bet.outcome,
        position_id=position_id,
        kind=FillKind.BUY,
        amount=amount,
        price=price,
        shares=shares_bought(amount, fee, price),
        fee=fee,
        realized_pnl=Money(ZERO),
        max_bet=max_bet,
        at=at,
    )


def sell_fill(
    sell: Sell,
    held: Position,
    *,
    quotes: Quotes,
    agent_id: AgentId,
    leg: int,
    decision_id: str | None,
    at: datetime,
) -> Fill:
    """The SELL a validated sell executes to: proceeds net of fee, P/L against average cost."""
    price = _tradable_price(quotes, held.market_id, held.outcome, Side.SELL)
    shares = shares_to_sell(held.shares, sell.percent)
    gross = gross_proceeds(shares, price)
    fee = trade_fee(quotes, held.market_id, held.outcome, Side.SELL, gross, price)
    return Fill(
        decision_id=decision_id,
        leg_index=leg,
        agent_id=agent_id,
        market_id=held.market_id,
        outcome=held.outcome,
        position_id=held.position_id,
        kind=FillKind.SELL,
        amount=Money(gross - fee),
        price=price,
        shares=shares,
        fee=fee,
        realized_pnl=Money(gross - fee - basis_released(held.cost_basis, held.shares, shares)),
        max_bet=None,
        at=at,
    )


def _tradable_price(quotes: Quotes, market_id: MarketId, outcome: str, side: Side) -> Price:
    """The leg's price; validation has already refused legs without one, so a miss is a bug."""
    price = quotes.price(market_id, outcome, side)
    if price is None or not is_tradable_price(price):
        raise ValueError(f"no tradable {side.value} price for {outcome!r} of {market_id!r}: validate first")
    return price
