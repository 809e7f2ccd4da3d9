"""Small, readable row builders for hand-computed scoring tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import ROUND_DOWN, Decimal
from typing import Any

import polars as pl

from arena.scoring.load.frames import SPECS, ScoringFrames
from arena.scoring.metrics.inputs import Inputs

T0 = datetime(2025, 1, 1, tzinfo=UTC)
Row = dict[str, Any]


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def seat(agent: str, cohort: str = "c1", bankroll: str = "10000", kind: str = "llm") -> Row:
    return {
        "cohort_id": cohort,
        "agent": agent,
        "agent_kind": kind,
        "baseline": kind == "baseline",
        "mock": False,
        "bankroll": Decimal(bankroll),
    }


def buy(
    agent: str,
    market: str,
    outcome: str,
    amount: str,
    price: float,
    *,
    max_bet: str = "2500",
    cash: str | None = None,
    at: datetime = T0,
    cohort: str = "c1",
    category: str | None = None,
) -> Row:
    """A buy of ``amount`` dollars at ``price`` (the side's price): shares = amount / price.

    ``cash`` at the decision's start defaults to 4 × ``max_bet`` (the default 25% max bet).
    """
    shares = (Decimal(amount) / Decimal(str(price))).quantize(Decimal("0.000001"), rounding=ROUND_DOWN)
    row = _fill(agent, market, outcome, "buy", amount, price, shares, max_bet, "0", at, cohort, category)
    return {**row, "cash_at_start": Decimal(cash) if cash is not None else 4 * Decimal(max_bet)}


def sell(
    agent: str, market: str, outcome: str, proceeds: str, price: float, shares: str, realized: str, **kw: Any
) -> Row:
    return _fill(
        agent,
        market,
        outcome,
        "sell",
        proceeds,
        price,
        Decimal(shares),
        None,
        realized,
        kw.get("at", T0),
        kw.get("cohort", "c1"),
        None,
    )


def settle(agent: str, market: str, outcome: str, payout: str, shares: str, realized: str, **kw: Any) -> Row:
    return _fill(
        agent,
        market,
        outcome,
        "settle",
        payout,
        kw.get("price"),
        Decimal(shares),
        None,
        realized,
        kw.get("at", T0),
        kw.get("cohort", "c1"),
        None,
    )


def _fill(
    agent: str,
    market: str,
    outcome: str,
    kind: str,
    amount: str,
    price: float | None,
    shares: Decimal,
    max_bet: str | None,
    realized: str,
    at: datetime,
    cohort: str,
    category: str | None,
) -> Row:
    return {
        "cohort_id": cohort,
        "agent": agent,
        "market_id": market,
        "venue": market.split(":")[0],
        "category": category,
        "outcome": outcome,
        "kind": kind,
        "amount": Decimal(amount),
        "price": price,
        "shares": shares,
        "max_bet": None if max_bet is None else Decimal(max_bet),
        "cash_at_start": None,
        "realized_pnl": Decimal(realized),
        "filled_at": at,
    }


def resolution(market: str, kind: str, winner: str | None = None, at: datetime | None = None) -> Row:
    if winner is None and kind in ("YES", "NO"):
        winner = kind
    return {"market_id": market, "kind": kind, "winner": winner, "resolved_at": at or day(10)}


def price(market: str, at: datetime, p: float, outcome: str = "YES") -> Row:
    return {"market_id": market, "outcome": outcome, "observed_at": at, "price": p}


def statement(
    agent: str, market: str, p: float, at: datetime, outcome: str = "YES", cohort: str = "c1"
) -> Row:
    return {
        "cohort_id": cohort,
        "agent": agent,
        "market_id": market,
        "outcome": outcome,
        "p": p,
        "stated_at": at,
    }


def window(
    market: str, opens: float, closes: float, hidden_until: float | None = None, cohort: str = "c1"
) -> Row:
    """A question's tournament window, in days from ``T0`` (no hidden period unless given)."""
    return {
        "cohort_id": cohort,
        "market_id": market,
        "opens_at": day(opens),
        "hidden_until": day(opens if hidden_until is None else hidden_until),
        "closes_at": day(closes),
    }


def mark(
    agent: str, at: datetime, value: str, cash: str | None = None, cohort: str = "c1", **pnl: str
) -> Row:
    return {
        "cohort_id": cohort,
        "agent": agent,
        "marked_at": at,
        "cash": Decimal(cash if cash is not None else value),
        "total_value": Decimal(value),
        "realized_pnl": Decimal(pnl.get("realized", "0")),
        "unrealized_pnl": Decimal(pnl.get("unrealized", "0")),
    }


def decision(
    agent: str,
    at: datetime,
    *,
    error_kind: str | None = None,
    tokens: int = 0,
    cost: str = "0",
    latency: float = 0.0,
) -> Row:
    return {
        "cohort_id": "c1",
        "agent": agent,
        "decided_at": at,
        "error_kind": error_kind,
        "tokens": tokens,
        "cost": Decimal(cost),
        "latency_s": latency,
    }


def build(**rows: list[Row]) -> ScoringFrames:
    """ScoringFrames from lists of row dicts, one keyword per frame name."""
    schemas = {spec.name: spec.schema for spec in SPECS}
    return ScoringFrames.of(
        **{name: pl.DataFrame(rows_, schema=schemas[name]) for name, rows_ in rows.items()}
    )


def inputs(frames: ScoringFrames) -> Inputs:
    """What per-agent metric functions take, with the leaderboard's default settings."""
    return Inputs.of(frames, min_markets=30)
