"""``markets.csv``: one row per market, with its resolution if it has one.

Rows become ``Market`` and ``Resolution`` objects. ``Market.resolution_time`` is never filled
from a dataset: a replayed market would otherwise carry the time it actually resolved, which
was not known while it was open.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache

import polars as pl

from markets.replay.columns import ROW
from markets.replay.format import (
    MARKET_COLUMNS,
    MARKET_REQUIRED,
    MARKETS_FILE,
    DatasetError,
    check_columns,
    parse_utc,
    row_error,
)
from markets.types import Market, Resolution, ResolutionKind, Venue

_KINDS = ", ".join(k.value for k in ResolutionKind)
# Built once, not per row of a big file (an enum lookup by value costs more than a dict's).
_KINDS_BY_NAME = {k.value: k for k in ResolutionKind}
_VENUES_BY_NAME = {v.value: v for v in Venue}


@dataclass(slots=True)
class MarketTable:
    """Parsed ``markets.csv``: markets and resolutions by market id, and each market's row."""

    markets: dict[str, Market] = field(default_factory=dict)
    resolutions: dict[str, Resolution] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)


def parse_markets(frame: pl.DataFrame, source: str) -> MarketTable:
    """Check and convert every row; ``source`` labels the resolutions (e.g. ``replay:name``)."""
    check_columns(MARKETS_FILE, [c for c in frame.columns if c != ROW], MARKET_REQUIRED, MARKET_COLUMNS)
    table = MarketTable()
    stripped = frame.with_columns(pl.col(pl.String).str.strip_chars())  # every cell at once, in polars
    for values in stripped.iter_rows(named=True):
        cells = _Cells(values)
        market = cells.market()
        key = market.market_id
        if key in table.rows:
            raise cells.error("venue_id", f"duplicate market {key} (first at row {table.rows[key]})")
        table.markets[key] = market
        table.rows[key] = cells.row
        resolution = cells.resolution(market, source)
        if resolution is not None:
            table.resolutions[key] = resolution
    return table


class _Cells:
    """One row's cells, with parsers that name the row and field when a value is bad."""

    def __init__(self, values: Mapping[str, object]) -> None:
        self.row = int(str(values[ROW]))
        self._values = values

    def error(self, column: str, problem: str) -> DatasetError:
        return row_error(MARKETS_FILE, self.row, column, problem)

    def text(self, column: str) -> str:
        """The cell's text (stripped by ``parse_markets``); "" when the column is absent."""
        return str(self._values.get(column) or "")

    def required(self, column: str) -> str:
        value = self.text(column)
        if not value:
            raise self.error(column, "is empty")
        return value

    def time(self, column: str) -> datetime | None:
        value = self.text(column)
        if not value:
            return None
        try:
            return parse_utc(value)
        except ValueError as exc:
            raise self.error(
                column,
                f"{value!r} is not a time (expected ISO 8601 with a zone, e.g. 2025-01-31T00:00:00+00:00)",
            ) from exc

    def amount(self, column: str) -> Decimal | None:
        value = self.text(column)
        if not value:
            return None
        try:
            amount = Decimal(value)
        except InvalidOperation as exc:
            raise self.error(column, f"{value!r} is not a number") from exc
        if not amount.is_finite() or amount < 0:
            raise self.error(column, f"{value!r} is not a finite number >= 0")
        return amount

    def outcomes(self) -> tuple[str, ...]:
        value = self.required("outcomes")
        try:
            return _outcome_names(value)
        except ValueError as exc:
            raise self.error("outcomes", f"{value!r}{exc}") from exc

    def token_ids(self) -> dict[str, str]:
        value = self.text("token_ids")
        if not value:
            return {}
        try:
            tokens = json.loads(value)
        except json.JSONDecodeError as exc:
            raise self.error("token_ids", f"{value!r} is not JSON (expected an object)") from exc
        if not isinstance(tokens, dict) or not all(isinstance(v, str) for v in tokens.values()):
            raise self.error("token_ids", f"{value!r}: expected a JSON object of outcome -> token id")
        return tokens

    def market(self) -> Market:
        venue = self.required("venue")
        if venue not in _VENUES_BY_NAME:
            raise self.error("venue", f"{venue!r} is not a venue (expected one of {', '.join(Venue)})")
        return Market(
            venue=_VENUES_BY_NAME[venue],
            venue_id=self.required("venue_id"),
            question=self.required("question"),
            outcomes=self.outcomes(),
            description=self.text("description"),
            open_time=self.time("open_time"),
            close_time=self.time("close_time"),
            category=self.text("category") or None,
            volume=self.amount("volume"),
            liquidity=self.amount("liquidity"),
            url=self.text("url") or None,
            token_ids=self.token_ids(),
        )

    def resolution(self, market: Market, source: str) -> Resolution | None:
        kind_text, winner = self.text("resolution"), self.text("winner")
        if not kind_text:
            for column in ("resolved_at", "winner"):
                if self.text(column):
                    raise self.error(column, "is set but 'resolution' is empty (an unresolved market)")
            return None
        if kind_text not in _KINDS_BY_NAME:
            raise self.error("resolution", f"{kind_text!r} is not a resolution (expected {_KINDS} or empty)")
        kind = _KINDS_BY_NAME[kind_text]
        resolved_at = self.time("resolved_at")
        if resolved_at is None:
            raise self.error("resolved_at", f"is empty but the market resolved {kind_text}")
        if kind is ResolutionKind.OUTCOME:
            if winner not in market.outcomes:
                raise self.error("winner", f"{winner!r} is not one of the outcomes {list(market.outcomes)}")
            return Resolution.winner(market.market_id, market.outcomes, winner, resolved_at, source)
        if winner:
            raise self.error("winner", f"is only used with resolution OUTCOME, not {kind_text}")
        if kind is not ResolutionKind.VOID and not market.is_binary:
            raise self.error("resolution", f'{kind_text} needs outcomes ["YES","NO"]; use OUTCOME + winner')
        return Resolution.binary(market.market_id, kind, resolved_at, source)


_EXPECTED_OUTCOMES = 'expected a JSON list of at least two distinct names, e.g. ["YES","NO"]'


@lru_cache(maxsize=256)
def _outcome_names(value: str) -> tuple[str, ...]:
    """The outcome names of an ``outcomes`` cell; most markets share a few lists, parsed once.
    A bad cell raises ``ValueError`` with the rest of the message (what was expected)."""
    try:
        outcomes = json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f" is not JSON ({_EXPECTED_OUTCOMES})") from exc
    valid = isinstance(outcomes, list) and all(isinstance(o, str) and o for o in outcomes)
    if not valid or len(outcomes) < 2 or len(set(outcomes)) != len(outcomes):
        raise ValueError(f": {_EXPECTED_OUTCOMES}")
    return tuple(outcomes)
