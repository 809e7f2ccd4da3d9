"""The ``portfolio`` tool: the asking agent's own cash and positions, as its prompt shows them
(positions in markets whose prices are hidden are valued at cost and flagged stale)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.tools import ToolSpec
from arena.tools.base import Tool, ToolContext, parameters


def _portfolio(ctx: ToolContext, args: Mapping[str, Any]) -> dict[str, Any]:
    view = ctx.portfolio
    return {
        "cash": str(view.cash),
        "max_bet": str(view.max_bet),
        "total_value": str(view.total_value),
        "positions": [
            {
                "position_id": p.position_id,
                "market_id": p.market_id,
                "question": p.question,
                "outcome": p.outcome,
                "shares": str(p.shares),
                "cost_basis": str(p.cost_basis),
                "mark_price": None if p.mark_price is None else str(p.mark_price),
                "value": str(p.value),
                "stale": p.stale,
                "market_open": p.market_open,
            }
            for p in view.positions
        ],
    }


PORTFOLIO = Tool(
    ToolSpec(
        "portfolio", "Your own cash, max bet and open positions with their current value.", parameters({})
    ),
    _portfolio,
)
