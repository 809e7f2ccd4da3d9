"""P/L (headline and per market), risk from the marks, trading activity, cost and labels, by hand."""

from __future__ import annotations

import math
from datetime import timedelta
from decimal import Decimal

import polars as pl
import pytest

from arena.scoring.metrics.labels import brier_label, disagree, return_label
from arena.scoring.metrics.summary import money, portfolio_metrics
from arena.scoring.rules.costs import cost_metrics
from arena.scoring.rules.pnl import market_pnl, seat_values
from arena.scoring.rules.risk import daily_returns, risk_metrics
from portfolio import Bet, Fill, FillKind, Ledger, MidQuotes, Rules, Sell
from tests.scoring.builders import (
    build,
    buy,
    day,
    decision,
    inputs,
    mark,
    price,
    resolution,
    seat,
    sell,
    settle,
)

D = Decimal
M, NO_SIDE, UNPRICED, SETTLED = "polymarket:m", "polymarket:no", "polymarket:unpriced", "polymarket:settled"


def test_seat_values_never_bettor_marked_and_unmarked() -> None:
    frames = build(
        agents=[seat("idle"), seat("marked"), seat("unmarked")],
        fills=[buy("unmarked", M, "YES", "100", 0.5)],
        snapshots=[
            mark("marked", day(1), "10100", realized="60", unrealized="40"),
            mark("marked", day(0), "9000"),
        ],
    )
    got = {r["agent"]: r for r in seat_values(frames).iter_rows(named=True)}
    assert (got["idle"]["value"], got["idle"]["pnl"], got["idle"]["realized"]) == (Decimal(10000), 0, 0)
    assert (got["marked"]["value"], got["marked"]["pnl"]) == (Decimal(10100), Decimal(100))  # the latest mark
    assert (got["marked"]["realized"], got["marked"]["unrealized"]) == (Decimal(60), Decimal(40))
    assert got["unmarked"]["value"] is None  # traded but never marked: unknown, not the bankroll


def test_market_pnl_by_hand() -> None:
    frames = build(
        agents=[seat("a")],
        fills=[
            # 100 at 0.40 → 250 shares; sell 125 at 0.60 → $75, releasing $50 of cost: +$25 realised.
            buy("a", M, "YES", "100", 0.4),
            sell("a", M, "YES", "75", 0.6, shares="125", realized="25", at=day(1)),
            # 60 on NO at 0.60 → 100 shares; YES now 0.5 so NO is worth 0.5: 50 − 60 = −10.
            buy("a", NO_SIDE, "NO", "60", 0.6),
            buy("a", UNPRICED, "YES", "100", 0.5),  # no price ever seen: valued at cost, 0
            # 100 at 0.25 → 400 shares, settled at $1: +$300 whatever the last price was.
            buy("a", SETTLED, "YES", "100", 0.25),
            settle("a", SETTLED, "YES", "400", shares="400", realized="300", price=1.0, at=day(3)),
        ],
        prices=[
            price(M, day(0), 0.4),
            price(M, day(2), 0.5),
            price(NO_SIDE, day(2), 0.5),
            price(SETTLED, day(2), 0.9),
        ],
        resolutions=[resolution(SETTLED, "YES", at=day(3))],
    )
    got = dict(market_pnl(frames).select("market_id", "pnl").iter_rows())
    # M: +25 realised, and 125 shares costing $50 now worth 125 × 0.5 = $62.50.
    assert got == {M: Decimal("37.5"), NO_SIDE: Decimal(-10), UNPRICED: Decimal(0), SETTLED: Decimal(300)}


def test_market_pnl_reconciles_with_the_ledger_to_the_micro_dollar() -> None:
    """A ledger trades three markets; P/L per market from its fill log sums to its own P/L exactly."""
    ledger = Ledger(Rules(), "a")
    rain, other, multi = "polymarket:rain", "manifold:other", "polymarket:who"
    marks = {rain: "0.37", other: "0.6180339", multi: {"Alice": "0.333", "Bob": "0.5", "Carol": "0.167"}}

    def quotes(rain_yes: str) -> MidQuotes:
        return MidQuotes(
            {
                rain: {"YES": D(rain_yes), "NO": 1 - D(rain_yes)},
                other: {"YES": D("0.41"), "NO": D("0.59")},
                multi: {"Alice": D("0.3"), "Bob": D("0.45"), "Carol": D("0.25")},
            }
        )

    decisions = [
        (
            day(0),
            [Bet(rain, "YES", D(333)), Bet(other, "NO", D("777.77")), Bet(multi, "Bob", D(250))],
            "0.30",
        ),
        (day(1), [Bet(rain, "YES", D(101))], "0.33"),
    ]
    rows = []
    for at, bets, rain_yes in decisions:
        cash = ledger.cash
        for fill in ledger.apply_decision(bets, quotes(rain_yes), at, decision_id=str(at)):
            rows.append(_row(fill, cash))
    (position,) = [p for p in ledger.open_positions() if p.market_id == rain]
    sold = ledger.apply_decision([Sell(position.position_id, D(37))], quotes("0.36"), day(2), decision_id="s")
    rows += [_row(fill, None) for fill in sold]
    prices = {
        rain: {"YES": D(marks[rain]), "NO": 1 - D(marks[rain])},
        other: {"YES": D(marks[other]), "NO": 1 - D(marks[other])},
    }
    prices[multi] = {k: D(v) for k, v in marks[multi].items()}
    valuation = ledger.mark(prices, day(3))
    frames = build(
        agents=[seat("a")],
        fills=rows,
        prices=[
            price(m, day(3), float(p), outcome=o) for m, sides in prices.items() for o, p in sides.items()
        ],
    )
    per_market = market_pnl(frames)
    assert per_market["pnl"].dtype == pl.Decimal(38, 6)
    assert sum(per_market["pnl"].to_list()) == valuation.pnl  # exact, not approximately
    assert valuation.pnl != valuation.pnl.quantize(Decimal("0.01"))  # the micro-dollars matter here


def _row(fill: Fill, cash: Decimal | None) -> dict[str, object]:
    return {
        "cohort_id": "c1",
        "agent": "a",
        "market_id": fill.market_id,
        "venue": fill.market_id.split(":")[0],
        "category": None,
        "outcome": fill.outcome,
        "kind": fill.kind.value,
        "amount": fill.amount,
        "price": None if fill.price is None else float(fill.price),
        "shares": fill.shares,
        "max_bet": fill.max_bet,
        "cash_at_start": cash if fill.kind == FillKind.BUY else None,
        "realized_pnl": fill.realized_pnl,
        "filled_at": fill.at,
    }


def test_daily_returns_volatility_sharpe_and_drawdown_by_hand() -> None:
    # Bankroll 100; daily closes 110 (the last of two marks on day 1), 99, 108.9: returns +10%, −10%, +10%.
    frames = build(
        agents=[seat("a", bankroll="100")],
        snapshots=[
            mark("a", day(1), "105"),
            mark("a", day(1) + timedelta(hours=12), "110"),
            mark("a", day(2), "99"),
            mark("a", day(3), "108.9"),
        ],
    )
    assert daily_returns(frames)["daily_return"].to_list() == pytest.approx([0.1, -0.1, 0.1])
    row = risk_metrics(frames).row(0, named=True)
    mean = 0.1 / 3
    std = math.sqrt((2 * (0.1 - mean) ** 2 + (-0.1 - mean) ** 2) / 2)
    assert row["return_days"] == 3
    assert row["volatility"] == pytest.approx(std)
    assert row["sharpe"] == pytest.approx(mean / std)
    assert row["max_drawdown"] == pytest.approx(0.1)  # from the 110 close down to 99


def test_agent_in_two_cohorts_is_one_book() -> None:
    # c1 (bankroll 100) closes 110 then 99; c2 (bankroll 300) joins on day 2 and closes 330.
    # Day 2: (99 − 110 + 330 − 300) / (110 + 300): new capital is not a profit.
    frames = build(
        agents=[seat("a", bankroll="100"), seat("a", cohort="c2", bankroll="300")],
        snapshots=[mark("a", day(1), "110"), mark("a", day(2), "99"), mark("a", day(2), "330", cohort="c2")],
    )
    assert daily_returns(frames)["daily_return"].to_list() == pytest.approx([0.1, 19 / 410])


def test_turnover_and_deployed_share() -> None:
    frames = build(
        agents=[seat("a", bankroll="1000")],
        fills=[buy("a", M, "YES", "100", 0.4), sell("a", M, "YES", "75", 0.6, shares="125", realized="25")],
        snapshots=[mark("a", day(1), "1000", cash="600"), mark("a", day(2), "1000", cash="1000")],
    )
    row = portfolio_metrics(inputs(frames)).row(0, named=True)
    assert row["turnover"] == pytest.approx((100 + 75) / 1000)
    assert row["deployed_share"] == pytest.approx((0.4 + 0.0) / 2)


def test_cross_cohort_return_is_on_capital_allocated() -> None:
    # +1,000 on 10,000 and −250 on 5,000: 750 / 15,000 = 5% (the mean of +10% and −5% would say 2.5%).
    frames = build(
        agents=[seat("a"), seat("a", cohort="c2", bankroll="5000")],
        snapshots=[mark("a", day(1), "11000"), mark("a", day(1), "4750", cohort="c2")],
    )
    row = money(inputs(frames)).row(0, named=True)
    assert (row["pnl"], row["value"]) == (Decimal(750), Decimal(15750))
    assert row["return_pct"] == pytest.approx(5.0)


def test_cost_metrics() -> None:
    frames = build(
        agents=[seat("a"), seat("bot", kind="baseline")],
        decisions=[
            decision("a", day(0), tokens=100, cost="0.01", latency=1.0),
            decision("a", day(1), tokens=200, cost="0.02", latency=2.0, error_kind="parse"),
            decision("a", day(2), tokens=300, cost="0.03", latency=3.0),
        ],
    )
    got = {r["agent"]: r for r in cost_metrics(frames).iter_rows(named=True)}
    a = got["a"]
    assert (a["decisions"], a["tokens"], a["cost"]) == (3, 600, Decimal("0.06"))
    assert (a["valid_rate"], a["cost_per_decision"], a["mean_latency_s"]) == (
        pytest.approx(2 / 3),
        pytest.approx(0.02),
        pytest.approx(2.0),
    )
    assert (got["bot"]["decisions"], got["bot"]["valid_rate"]) == (0, None)


@pytest.mark.parametrize(
    ("brier", "label"),
    [
        # Forecaster Arena: 0.00 Perfect, < 0.10 Excellent, < 0.20 Good, 0.20-0.25 "Fair (at or
        # near random)": always saying 50% (exactly 0.25) is Fair, anything worse Poor, < 0.40.
        (0.0, "Perfect"),
        (0.0999, "Excellent"),
        (0.10, "Good"),
        (0.1999, "Good"),
        (0.20, "Fair (at or near random)"),
        (0.2499, "Fair (at or near random)"),
        (0.25, "Fair (at or near random)"),
        (0.2501, "Poor"),
        (0.3999, "Poor"),
        (0.40, "Very Poor"),
        (None, None),
    ],
)
def test_brier_labels(brier: float | None, label: str | None) -> None:
    frame = pl.DataFrame({"b": [brier]}, schema={"b": pl.Float64})
    assert frame.select(brier_label(pl.col("b"))).item() == label


@pytest.mark.parametrize(
    ("pct", "label"),
    [
        # Forecaster Arena's bands: > +50 Exceptional, < −20 Very Poor; an edge belongs to the band nearer 0.
        (50.01, "Exceptional"),
        (50.0, "Excellent"),
        (20.01, "Excellent"),
        (20.0, "Good"),
        (5.01, "Good"),
        (5.0, "Neutral"),
        (0.0, "Neutral"),
        (-5.0, "Neutral"),
        (-5.01, "Poor"),
        (-20.0, "Poor"),
        (-20.01, "Very Poor"),
        (None, None),
    ],
)
def test_return_labels(pct: float | None, label: str | None) -> None:
    frame = pl.DataFrame({"r": [pct]}, schema={"r": pl.Float64})
    assert frame.select(return_label(pl.col("r"))).item() == label


@pytest.mark.parametrize(
    ("brier", "pct", "conflict"),
    [
        (0.25, 30.0, False),  # Fair (a coin's score) never disagrees, even with a good return
        (0.2501, 30.0, True),  # Poor with Excellent
        (0.1999, -5.01, True),  # Good with Poor
        (0.20, -50.0, False),  # Fair again
        (0.30, 5.0, False),  # Neutral never disagrees
    ],
)
def test_labels_disagree_only_outside_fair_and_neutral(brier: float, pct: float, conflict: bool) -> None:
    frame = pl.DataFrame({"b": [brier], "r": [pct]})
    assert frame.select(disagree(pl.col("b"), pl.col("r"))).item() is conflict
