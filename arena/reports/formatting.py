"""How numbers read in the dashboard and the reports: dollars to the cent, signed P/L, percents.

Money arrives as ``Decimal`` (exact) or float (statistics); either is rounded half-even to the
cent for display only, never for storage. A missing value reads as an em dash.
"""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_EVEN, Decimal

MISSING = "—"
CENT = Decimal("0.01")


def _cents(value: Decimal | float) -> Decimal:
    return Decimal(str(value)).quantize(CENT, rounding=ROUND_HALF_EVEN)


def money(value: Decimal | float | None) -> str:
    """``$10,234.57``; negative amounts as ``−$12.30``."""
    if value is None:
        return MISSING
    cents = _cents(value)
    return f"{'−' if cents < 0 else ''}${abs(cents):,.2f}"


def signed_money(value: Decimal | float | None) -> str:
    """P/L with its sign: ``+$525.42``, ``−$685.20``, ``$0.00``."""
    if value is None:
        return MISSING
    cents = _cents(value)
    return f"+{money(cents)}" if cents > 0 else money(cents)


def percent(value: float | None, *, signed: bool = False, digits: int = 2) -> str:
    """A value already in percent (5.25 → ``5.25%``); ``signed`` adds ``+`` to gains."""
    if value is None or value != value:  # None or NaN
        return MISSING
    text = f"{value:+,.{digits}f}%" if signed else f"{value:,.{digits}f}%"
    return text.replace("-", "−")


def share(value: float | None, digits: int = 0) -> str:
    """A fraction as a percent: 0.75 → ``75%``."""
    return MISSING if value is None or value != value else percent(value * 100, digits=digits)


def number(value: float | None, digits: int = 3) -> str:
    """A score such as a Brier score: ``0.213``."""
    if value is None or value != value:
        return MISSING
    return f"{value:.{digits}f}".replace("-", "−")


def interval(
    value: float | None, lo: float | None, hi: float | None, *, digits: int = 3, unit: str = ""
) -> str:
    """``0.213 [0.180, 0.250]`` (the bracket only when both ends are known)."""
    if value is None or value != value:
        return MISSING
    head = f"{number(value, digits)}{unit}"
    ends = bounds(lo, hi, digits=digits)
    return head if ends == MISSING else f"{head} {ends}"


def bounds(lo: float | None, hi: float | None, *, digits: int = 3) -> str:
    """``[0.180, 0.250]``, or an em dash when an end is unknown."""
    if lo is None or hi is None or lo != lo or hi != hi:
        return MISSING
    return f"[{number(lo, digits)}, {number(hi, digits)}]"


def metric_text(fmt: str, value: object, lo: float | None = None, hi: float | None = None) -> str:
    """A registered metric's value as text, by its ``Metric.fmt`` (interval in brackets when given)."""
    if value is None:
        return MISSING
    if fmt in ("score", "percent") and isinstance(value, float):
        digits = 2 if fmt == "percent" else 3
        return interval(value, lo, hi, digits=digits, unit="%" if fmt == "percent" else "")
    if fmt in ("money", "pnl") and isinstance(value, Decimal | float):
        return signed_money(value) if fmt == "pnl" else money(value)
    if fmt == "cost" and isinstance(value, Decimal | float):
        return f"${float(value):,.4f}"
    if fmt == "share" and isinstance(value, float):
        return share(value, digits=1)
    if fmt == "number" and isinstance(value, float):
        return number(value)
    if fmt == "flag":
        return "yes" if value else "no"
    if fmt == "time" and isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return f"{value:,}" if isinstance(value, int) else str(value)
