"""Pure accounting for the arena: rules, actions, ledgers, marks, settlement and P/L.

Nothing here performs IO or imports another package of this repository, so every number the
arena reports can be recomputed from a fill log with this package alone.
"""

from portfolio.actions import Action, Bet, Sell
from portfolio.fills import Fill, FillKind
from portfolio.ledger import DecisionRejected, Ledger
from portfolio.positions import FillRejected, Mark, Position, PositionStatus
from portfolio.quotes import FeeFn, MidQuotes, Quotes, Side, zero_fee
from portfolio.rules import Rules
from portfolio.settlement import SettlementRejected
from portfolio.units import AgentId, MarketId, Money, Price, Shares
from portfolio.validation import LegError, check_actions
from portfolio.valuation import FreshMarks, PositionValue, Prices, Valuation

__all__ = [
    "Action",
    "AgentId",
    "Bet",
    "DecisionRejected",
    "FeeFn",
    "Fill",
    "FillKind",
    "FillRejected",
    "FreshMarks",
    "Ledger",
    "LegError",
    "Mark",
    "MarketId",
    "MidQuotes",
    "Money",
    "Position",
    "PositionStatus",
    "PositionValue",
    "Price",
    "Prices",
    "Quotes",
    "Rules",
    "Sell",
    "SettlementRejected",
    "Shares",
    "Side",
    "Valuation",
    "check_actions",
    "zero_fee",
]
