"""What an LLM agent's skill cost: dollars of model cost per point of Brier skill and per 1% of return.

Definitions (docs/dashboard.md, "Comparison views"):

- A **point of Brier skill** is 0.01 of Brier improvement over a reference forecaster, on the
  bets the agent placed (the cohort's headline reading of a bet as a forecast):
  ``points = (reference Brier − agent Brier) / 0.01``. Two references: always saying 50%
  (Brier 0.25, ``metric_spec.RANDOM_BRIER``) and the market (the Brier of the fill prices of
  the same bets, the registry's ``brier_market``).
- **1% of return** is one percentage point of the registry's ``return_pct`` (P/L over bankroll).
- Dollars per unit = model cost / units, computed in ``Decimal`` from the shown digits of each
  score. Where there is nothing to divide by, the value is null and ``*_why`` says why: no scored
  bet, no improvement (units ≤ 0), or no recorded cost. It never divides by zero and never
  shows a negative price for a loss.
- An agent whose headline reading contradicts its bets (``brier_incoherent``: most of them read
  as less likely than the price paid, as tiny bets on longshots are) is credited with no points
  at all: its points are null and ``*_why`` gives the reason.

An agent counts as an LLM here when it recorded model usage: tokens or a cost above zero.
"""

from __future__ import annotations

from decimal import Decimal

import polars as pl

from arena.scoring.load.frames import COST, Reading, suffixed
from arena.scoring.metrics.spec import RANDOM_BRIER

POINT = Decimal("0.01")  # one point of Brier skill
CENT_FRACTIONS = Decimal("1e-10")  # the precision model costs are stored at (``frames.COST``)
Priced = tuple[Decimal | None, str | None]  # dollars per unit, or None and the reason


def _exact(value: float) -> Decimal:
    """A float score as the decimal it prints as (``0.19`` → ``Decimal("0.19")``)."""
    return Decimal(repr(value))


def per_unit(cost: Decimal, units: Decimal | None, nothing: str, no_gain: str) -> Priced:
    """``cost / units`` to 1e-10 dollars, or ``(None, why)``: ``nothing`` when there are no units
    to count, ``no_gain`` when they are not positive, "no model cost recorded" for a free run."""
    if units is None:
        return None, nothing
    if units <= 0:
        return None, no_gain
    if cost <= 0:
        return None, "no model cost recorded"
    return (cost / units).quantize(CENT_FRACTIONS), None


def brier_points(brier: float | None, reference: float | None) -> Decimal | None:
    """Points of Brier skill over ``reference`` (0.01 each); None when either Brier is unknown."""
    if brier is None or reference is None:
        return None
    return (_exact(reference) - _exact(brier)) / POINT


def _per_brier_point(cost: Decimal, brier: float | None, reference: float | None) -> Priced:
    points = brier_points(brier, reference)
    if points is None or brier is None or reference is None:
        return per_unit(cost, None, "no resolved bet", "")
    return per_unit(cost, points, "", f"no skill: Brier {brier:.3f} ≥ {reference:.3f}")


def _per_return_pct(cost: Decimal, ret: float | None) -> Priced:
    if ret is None:
        return per_unit(cost, None, "no return yet", "")
    return per_unit(cost, _exact(ret), "", f"no gain: {ret:+.2f}% ≤ 0")


def _float(value: Decimal | None) -> float | None:
    return None if value is None else float(value)


def cost_per_point(table: pl.DataFrame, implied: Reading) -> pl.DataFrame:
    """Per LLM agent of a leaderboard ``table`` (``arena.scoring.leaderboard``): its cost, Brier,
    Brier points over 50% (``points``, with ``points_lo``/``points_hi`` from the Brier interval),
    over the market (``market_points``), return with its interval, and dollars per point / per 1%
    (``per_point``, ``per_market_point``, ``per_return_pct``) each with its ``*_why``."""
    key = suffixed("brier", implied)
    rows = []
    llms = table.filter((pl.col("tokens").fill_null(0) > 0) | (pl.col("cost").fill_null(0) > 0))
    for row in llms.iter_rows(named=True):
        cost = Decimal(row["cost"] or 0)
        brier, market, ret = row[key], row["brier_market"], row["return_pct"]
        per_point, point_why = _per_brier_point(cost, brier, RANDOM_BRIER)
        per_market, market_why = _per_brier_point(cost, brier, market)
        per_return, return_why = _per_return_pct(cost, ret)
        lo, hi = row[f"{key}_lo"], row[f"{key}_hi"]
        if row.get(suffixed("brier_incoherent", implied)):
            share = row[suffixed("incoherent_share", implied)]
            point_why = market_why = f"no credit: {share:.0%} of its bets read below the price paid"
            per_point = per_market = brier = market = lo = hi = None
        rows.append(
            {
                "agent": row["agent"],
                "cost": cost,
                "tokens": row["tokens"],
                "brier": row[key],
                "points": _float(brier_points(brier, RANDOM_BRIER)),
                # A lower Brier is more points: the interval's ends swap.
                "points_lo": _float(brier_points(hi, RANDOM_BRIER)),
                "points_hi": _float(brier_points(lo, RANDOM_BRIER)),
                "per_point": per_point,
                "per_point_why": point_why,
                "market_points": _float(brier_points(brier, market)),
                "per_market_point": per_market,
                "per_market_point_why": market_why,
                "return_pct": ret,
                "return_pct_lo": row["return_pct_lo"],
                "return_pct_hi": row["return_pct_hi"],
                "per_return_pct": per_return,
                "per_return_pct_why": return_why,
            }
        )
    return pl.DataFrame(rows, schema=SCHEMA)


_F, _S = pl.Float64, pl.String
SCHEMA: dict[str, pl.DataType] = {
    "agent": _S(),
    "cost": COST,
    "tokens": pl.Int64(),
    "brier": _F(),
    "points": _F(),
    "points_lo": _F(),
    "points_hi": _F(),
    "per_point": COST,
    "per_point_why": _S(),
    "market_points": _F(),
    "per_market_point": COST,
    "per_market_point_why": _S(),
    "return_pct": _F(),
    "return_pct_lo": _F(),
    "return_pct_hi": _F(),
    "per_return_pct": COST,
    "per_return_pct_why": _S(),
}
