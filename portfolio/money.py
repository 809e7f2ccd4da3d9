"""The arena's fixed precision for money and shares, in one place.

Every amount of money the ledger stores (cash, bet amounts, proceeds, payouts, fees, cost
basis, P/L, position values) lies on a grid of one micro-dollar (1e-6), and every share count
on a grid of 1e-6 shares. Prices are kept exactly as given. Fixing the grid is what lets a
ledger rebuilt from its fill log reproduce the stored balances exactly, and lets storage use
``NUMERIC(.., 6)`` columns without rounding anything.

Rounding always favours the house by at most one quantum: shares bought, sale proceeds and
settlement payouts are truncated (an agent never gets more than it paid for), fees are
rounded up. Display to cents is the caller's job.

Arithmetic runs in a wide private context so that sums and products are exact and quotients
truncated (never rounded up) before they are put on the grid, whatever the caller's ``decimal``
context is: the helpers below use it explicitly, and the ledger's entry points run under it
(``@exact``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_UP, Context, Decimal, localcontext
from typing import ParamSpec, TypeVar

from portfolio.units import Money, Shares

MONEY_QUANTUM = Decimal("0.000001")
SHARE_QUANTUM = Decimal("0.000001")
ZERO = Decimal(0)
ONE = Decimal(1)
HUNDRED = Decimal(100)
# No amount of money the ledger handles reaches this: its stores hold |x| < 10^12.
MONEY_LIMIT = Decimal(10) ** 12

# 60 significant digits hold the exact product of two 28-digit decimals; ROUND_DOWN makes an
# inexact quotient a truncation, so truncating it again to the grid gives the exact floor.
_EXACT = Context(prec=60, rounding=ROUND_DOWN)
_truncate = _EXACT.quantize  # ``quantize`` with the context's ROUND_DOWN: a third of the keyword call's cost


P = ParamSpec("P")
R = TypeVar("R")


def exact(fn: Callable[P, R]) -> Callable[P, R]:
    """Run ``fn`` in the wide context, so a caller's low ``decimal`` precision cannot round money."""

    @functools.wraps(fn)
    def in_exact_context(*args: P.args, **kwargs: P.kwargs) -> R:
        with localcontext(_EXACT):
            return fn(*args, **kwargs)

    return in_exact_context


def money_down(value: Decimal) -> Money:
    """``value`` truncated to the micro-dollar (for money paid *to* an agent or computed from it)."""
    return Money(_truncate(value, MONEY_QUANTUM))


def money_up(value: Decimal) -> Money:
    """``value`` rounded up to the micro-dollar (for fees the agent pays)."""
    return Money(value.quantize(MONEY_QUANTUM, rounding=ROUND_UP, context=_EXACT))


def shares_down(value: Decimal) -> Shares:
    """``value`` truncated to the share quantum, so a buy never gets more shares than it paid for."""
    return Shares(_truncate(value, SHARE_QUANTUM))


def sub(a: Decimal, b: Decimal) -> Decimal:
    """Exact difference."""
    return _EXACT.subtract(a, b)


def mul(a: Decimal, b: Decimal) -> Decimal:
    """Exact product (no rounding for operands of up to 30 digits each)."""
    return _EXACT.multiply(a, b)


def div(a: Decimal, b: Decimal) -> Decimal:
    """Quotient truncated at 60 digits: safe to truncate again onto a grid."""
    return _EXACT.divide(a, b)


def on_money_grid(value: Decimal) -> bool:
    """True for a finite amount with no digits below the micro-dollar."""
    return value.is_finite() and money_down(value) == value


def on_share_grid(value: Decimal) -> bool:
    """True for a finite share count with no digits below the share quantum."""
    return value.is_finite() and shares_down(value) == value


def is_decimal(value: object) -> bool:
    """True for a ``Decimal`` (or int) that is finite; floats and strings are not money."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, Decimal) and value.is_finite()


def is_tradable_price(value: object) -> bool:
    """A price a fill may use: a finite Decimal strictly inside (0, 1). 0 and 1 sell nothing."""
    return isinstance(value, Decimal) and value.is_finite() and ZERO < value < ONE


def is_mark_price(value: object) -> bool:
    """A price a mark may use: a finite Decimal in [0, 1] (a decided market can sit at 0 or 1)."""
    return isinstance(value, Decimal) and value.is_finite() and ZERO <= value <= ONE


def fmt_money(value: Decimal) -> str:
    """``$1,234.50`` for messages; more digits only when cents would hide a difference (an
    amount past ``MONEY_LIMIT`` is written as it came, e.g. ``$1E+999``)."""
    if not value.is_finite():
        return str(value)
    if abs(value) >= MONEY_LIMIT:
        return f"${value}"
    sign, magnitude = ("-", -value) if value < 0 else ("", value)
    cents = magnitude.quantize(Decimal("0.01"), context=_EXACT)
    if cents == magnitude:
        return f"{sign}${cents:,}"
    return f"{sign}${magnitude.normalize(_EXACT):,f}"
