"""Per-bet scoring on hand-computed bets, and agreement with ``portfolio.metrics`` on random ones."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import numpy as np
import pytest

from arena.scoring.rules.bets import scored_bets
from portfolio import metrics
from portfolio.fills import Fill, FillKind
from tests.scoring.builders import T0, build, buy, day, resolution, seat


def _by_market(frames_rows: dict) -> dict[str, dict]:
    table = scored_bets(build(**frames_rows))
    return {row["market_id"]: row for row in table.iter_rows(named=True)}


def test_design_worked_example() -> None:
    # Forecaster Arena's worked example: $500 on YES at 0.40 buys 1,250 shares; with max bet $2,500
    # that is 20% confidence.
    # YES wins: Brier (0.2 − 1)² = 0.64; the market said 0.40: (0.4 − 1)² = 0.36; held, +$750.
    rows = _by_market(
        {
            "agents": [seat("a")],
            "fills": [buy("a", "polymarket:m", "YES", "500", 0.40, at=day(0))],
            "resolutions": [resolution("polymarket:m", "YES", at=day(3))],
        }
    )
    bet = rows["polymarket:m"]
    assert bet["shares"] == Decimal("1250")
    assert bet["confidence"] == pytest.approx(0.2)
    assert bet["brier"] == pytest.approx(0.64)
    assert bet["brier_market"] == pytest.approx(0.36)
    assert bet["won"] is True
    assert bet["hold_pnl"] == pytest.approx(750.0)
    assert (bet["horizon_days"], bet["horizon"]) == (pytest.approx(3.0), "<=7d")


def test_both_readings_of_a_yes_and_a_no_bet() -> None:
    # $500 YES at 0.40, cash $10,000, max bet $2,500. fa: c = 500 / 2,500 = 0.2, P(YES) = 0.2.
    # kelly: φ = 500 / 10,000 = 0.05, P(YES) = 0.40 + 0.05 · 0.60 = 0.43. YES wins:
    # fa (0.2 − 1)² = 0.64, kelly (0.43 − 1)² = 0.3249.
    # $1,000 NO at 0.70 (the NO side's price), same cash: fa c = 0.4, P(NO) = 0.4, P(YES) = 0.6;
    # kelly φ = 0.1, P(NO) = 0.70 + 0.1 · 0.30 = 0.73, P(YES) = 0.27. YES wins:
    # fa (0.6 − 1)² = 0.16, kelly (0.27 − 1)² = 0.5329.
    rows = _by_market(
        {
            "agents": [seat("a")],
            "fills": [
                buy("a", "polymarket:y", "YES", "500", 0.40, cash="10000"),
                buy("a", "polymarket:n", "NO", "1000", 0.70, cash="10000"),
            ],
            "resolutions": [resolution("polymarket:y", "YES"), resolution("polymarket:n", "YES")],
        }
    )
    yes, no = rows["polymarket:y"], rows["polymarket:n"]
    assert (yes["confidence"], yes["confidence_kelly"]) == (pytest.approx(0.2), pytest.approx(0.43))
    assert (yes["forecast_yes"], yes["forecast_yes_kelly"]) == (pytest.approx(0.2), pytest.approx(0.43))
    assert (yes["brier"], yes["brier_kelly"]) == (pytest.approx(0.64), pytest.approx(0.3249))
    assert (no["confidence"], no["confidence_kelly"]) == (pytest.approx(0.4), pytest.approx(0.73))
    assert (no["forecast_yes"], no["forecast_yes_kelly"]) == (pytest.approx(0.6), pytest.approx(0.27))
    assert (no["brier"], no["brier_kelly"]) == (pytest.approx(0.16), pytest.approx(0.5329))


def test_no_bet_is_scored_as_one_minus_confidence_on_yes() -> None:
    # $1,000 on NO at 0.70 (YES at 0.30): c = 0.4, f_YES = 0.6. NO wins, y_YES = 0:
    # (0.6 − 0)² = 0.36 = (c − 1)². Market: NO at 0.7 → (0.7 − 1)² = 0.09.
    rows = _by_market(
        {
            "agents": [seat("a")],
            "fills": [buy("a", "polymarket:m", "NO", "1000", 0.70)],
            "resolutions": [resolution("polymarket:m", "NO")],
        }
    )
    bet = rows["polymarket:m"]
    assert (bet["forecast_yes"], bet["outcome_yes"]) == (pytest.approx(0.6), 0.0)
    assert bet["brier"] == pytest.approx(0.36)
    assert bet["brier_market"] == pytest.approx(0.09)
    assert bet["won"] is True


def test_multi_outcome_void_5050_and_unresolved() -> None:
    rows = _by_market(
        {
            "agents": [seat("a")],
            "fills": [
                buy("a", "polymarket:multi", "Alice", "2500", 0.5),  # c = 1, Bob won: (1 − 0)² = 1
                buy("a", "polymarket:void", "YES", "1250", 0.5),
                buy("a", "polymarket:split", "YES", "1250", 0.5),  # c = 0.5 vs y = 0.5: 0
                buy("a", "polymarket:open", "YES", "1250", 0.5),
            ],
            "resolutions": [
                resolution("polymarket:multi", "OUTCOME", winner="Bob"),
                resolution("polymarket:void", "VOID"),
                resolution("polymarket:split", "5050"),
            ],
        }
    )
    multi, void, split, still_open = (rows[f"polymarket:{m}"] for m in ("multi", "void", "split", "open"))
    assert (multi["brier"], multi["won"], multi["forecast_yes"]) == (
        pytest.approx(1.0),
        False,
        pytest.approx(1.0),
    )
    assert (void["scored"], void["brier"], void["won"], void["hold_pnl"]) == (False, None, None, 0.0)
    # 50-50: scored against 0.5, neither won nor lost; 2,500 shares pay $0.50 each: 1,250 − 1,250 = 0.
    assert (split["scored"], split["y"], split["brier"], split["won"]) == (True, 0.5, 0.0, None)
    assert split["hold_pnl"] == pytest.approx(0.0)
    assert (still_open["scored"], still_open["horizon"], still_open["hold_pnl"]) == (False, None, None)


@pytest.mark.parametrize(
    ("days", "bucket"), [(7, "<=7d"), (7.5, "<=30d"), (30, "<=30d"), (90, "<=90d"), (90.01, ">90d")]
)
def test_horizon_buckets(days: float, bucket: str) -> None:
    rows = _by_market(
        {
            "agents": [seat("a")],
            "fills": [buy("a", "polymarket:m", "YES", "100", 0.5, at=T0)],
            "resolutions": [resolution("polymarket:m", "YES", at=T0 + timedelta(days=days))],
        }
    )
    assert rows["polymarket:m"]["horizon"] == bucket


def test_vectorised_rules_agree_with_portfolio_metrics_on_random_bets() -> None:
    """No silent divergence: the polars expressions give what portfolio.metrics gives, bet by bet."""
    rng = np.random.default_rng(11)
    fills, resolutions, expected, expected_kelly = [], [], [], []
    kinds = ["YES", "NO", "5050", "OUTCOME"]
    for i in range(400):
        market = f"polymarket:{i}"
        kind = kinds[i % 4]
        outcomes = ["A", "B", "C"] if kind == "OUTCOME" else ["YES", "NO"]
        side = outcomes[rng.integers(len(outcomes))]
        max_bet = Decimal(int(rng.integers(200, 5000)))
        amount = (max_bet * Decimal(str(round(rng.uniform(0.01, 1.0), 4)))).quantize(Decimal("0.01"))
        amount = min(amount, max_bet)
        price = round(float(rng.uniform(0.02, 0.98)), 4)
        winner = outcomes[rng.integers(len(outcomes))] if kind == "OUTCOME" else None
        fills.append(buy("a", market, side, str(amount), price, max_bet=str(max_bet)))
        resolutions.append(resolution(market, kind, winner=winner))
        payouts = _payouts(kind, outcomes, winner)
        fill = Fill(
            None,
            0,
            "a",
            market,
            side,
            "p",
            FillKind.BUY,
            amount,
            Decimal(str(price)),
            Decimal(1),
            Decimal(0),
            Decimal(0),
            max_bet,
            T0,
        )
        binary = kind != "OUTCOME"
        kelly = metrics.f_yes(
            side, metrics.kelly_implied(Decimal(str(price)), amount, 4 * max_bet), binary=binary
        )
        expected_kelly.append(metrics.brier(kelly, metrics.outcome_indicator(side, payouts, binary=binary)))
        expected.append(
            (
                metrics.implied_confidence(amount, max_bet),
                metrics.bet_brier(fill, payouts, binary=binary),
                metrics.bet_won(side, payouts),
            )
        )
    rows = scored_bets(build(agents=[seat("a")], fills=fills, resolutions=resolutions)).sort(
        "market_id", descending=False
    )
    got = {r["market_id"]: r for r in rows.iter_rows(named=True)}
    for i, ((confidence, brier, won), kelly) in enumerate(zip(expected, expected_kelly, strict=True)):
        row = got[f"polymarket:{i}"]
        assert row["confidence"] == pytest.approx(float(confidence), abs=1e-12)
        assert row["brier"] == pytest.approx(float(brier), abs=1e-12)
        assert row["brier_kelly"] == pytest.approx(float(kelly), abs=1e-12)
        assert row["won"] == won


def _payouts(kind: str, outcomes: list[str], winner: str | None) -> dict[str, Decimal]:
    if kind == "5050":
        return {o: Decimal("0.5") for o in outcomes}
    won = winner if kind == "OUTCOME" else kind
    return {o: Decimal(1 if o == won else 0) for o in outcomes}
