"""Dollars per point of Brier skill and per 1% of return: hand-derived values and every "—" reason."""

from __future__ import annotations

from decimal import Decimal

import polars as pl
import pytest

from arena.scoring.load.frames import COST
from arena.scoring.metrics.value_for_money import brier_points, cost_per_point, per_unit

COLUMNS = ("brier", "brier_lo", "brier_hi", "brier_kelly", "brier_kelly_lo", "brier_kelly_hi", "brier_market")


def _table(*rows: dict[str, object]) -> pl.DataFrame:
    base = {c: None for c in (*COLUMNS, "return_pct", "return_pct_lo", "return_pct_hi")}
    schema = {"agent": pl.String, "cost": COST, "tokens": pl.Int64} | {c: pl.Float64 for c in base}
    return pl.DataFrame([base | row for row in rows], schema=schema)


def test_hand_derived_prices() -> None:
    # Brier 0.19: (0.25 − 0.19) / 0.01 = 6 points → $1.20 / 6 = $0.20; vs the market's 0.22: 3 points
    # → $0.40; return 4% → $0.30 per 1%. The interval [0.15, 0.23] is 2 … 10 points (ends swap).
    good = {"agent": "llm", "cost": Decimal("1.20"), "tokens": 900, "brier": 0.19, "brier_lo": 0.15}
    good |= {"brier_hi": 0.23, "brier_market": 0.22, "return_pct": 4.0}
    row = cost_per_point(_table(good), "fa").row(0, named=True)
    assert row["points"] == 6.0 and (row["points_lo"], row["points_hi"]) == (2.0, 10.0)
    assert row["per_point"] == Decimal("0.2") and row["per_point_why"] is None
    assert row["market_points"] == 3.0 and row["per_market_point"] == Decimal("0.4")
    assert row["per_return_pct"] == Decimal("0.3") and row["per_return_pct_why"] is None


def test_the_headline_reading_picks_the_brier() -> None:
    row = {"agent": "llm", "cost": Decimal("1"), "tokens": 1, "brier": 0.30, "brier_kelly": 0.20}
    assert cost_per_point(_table(row), "kelly")["per_point"].item() == Decimal("0.2")  # 5 points
    assert cost_per_point(_table(row), "fa")["per_point"].item() is None


@pytest.mark.parametrize(
    ("brier", "market", "ret", "why_point", "why_market", "why_return"),
    [
        (
            0.25,
            0.25,
            0.0,
            "no skill: Brier 0.250 ≥ 0.250",
            "no skill: Brier 0.250 ≥ 0.250",
            "no gain: +0.00% ≤ 0",
        ),
        (0.31, 0.20, -2.5, "no skill: Brier 0.310 ≥ 0.250", "Brier 0.310 ≥ 0.200", "no gain: -2.50% ≤ 0"),
        (None, None, None, "no resolved bet", "no resolved bet", "no return yet"),
    ],
)
def test_no_skill_or_no_gain_is_a_reason_never_a_division(
    brier: float | None,
    market: float | None,
    ret: float | None,
    why_point: str,
    why_market: str,
    why_return: str,
) -> None:
    row = {"agent": "llm", "cost": Decimal("2"), "tokens": 10, "brier": brier, "brier_market": market}
    out = cost_per_point(_table(row | {"return_pct": ret}), "fa").row(0, named=True)
    assert out["per_point"] is None and why_point in out["per_point_why"]
    assert out["per_market_point"] is None and why_market in out["per_market_point_why"]
    assert out["per_return_pct"] is None and why_return in out["per_return_pct_why"]


def test_only_agents_with_model_usage_count_and_free_runs_say_so() -> None:
    free = {"agent": "local", "cost": Decimal(0), "tokens": 5000, "brier": 0.1, "return_pct": 3.0}
    bot = {"agent": "hold", "cost": Decimal(0), "tokens": 0, "brier": 0.1, "return_pct": 3.0}
    out = cost_per_point(_table(free, bot), "fa")
    assert out["agent"].to_list() == ["local"]
    assert out["per_point"].item() is None and out["per_point_why"].item() == "no model cost recorded"
    assert cost_per_point(_table(bot), "fa").is_empty()


def test_units_are_exact_decimals() -> None:
    assert brier_points(0.1, 0.25) == Decimal(15)  # not 14.999999999999998
    assert per_unit(Decimal("1"), Decimal(3), "", "") == (Decimal("0.3333333333"), None)
