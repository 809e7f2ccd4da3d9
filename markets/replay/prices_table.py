"""``prices.csv``: when each price became known, as sorted per-market series.

A row holds ``market_id``, one time column and ``price`` (plus ``outcome`` when present):
- ``date`` (YYYY-MM-DD): a daily close, usable from 00:00 UTC of the next day;
- ``observed_at`` (ISO 8601 with zone): a price usable from that instant.
Without an ``outcome`` column each price is the first outcome's. A binary market may give only
its first outcome (YES); NO is then 1 − YES. Other markets must price every outcome at each time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

import polars as pl

from markets.replay.columns import (
    ROW,
    check_unique,
    first_row,
    parse_dates,
    parse_probabilities,
    parse_times,
    require_cells,
)
from markets.replay.format import (
    DATE_COLUMN,
    OBSERVED_AT_COLUMN,
    PRICE_COLUMNS,
    PRICES_FILE,
    DatasetError,
    check_columns,
    row_error,
    usable_from,
)
from markets.types import NO, YES, Market, PriceSnapshot

_TIME = "_t"  # parsed time, for sorting and duplicate checks inside polars
_TEXT = "_time_text"  # the time as written, mapped back to a Python datetime when building


@dataclass(frozen=True, slots=True)
class PriceSeries:
    """One market's prices, oldest first; ``times[i]`` is when ``snapshots[i]`` became usable."""

    times: tuple[datetime, ...]
    snapshots: tuple[PriceSnapshot, ...]
    first_row: int  # prices.csv row of the earliest price, for error messages


def parse_prices(
    frame: pl.DataFrame, markets: Mapping[str, Market], source: str
) -> tuple[dict[str, PriceSeries], str]:
    """Check and convert ``prices.csv``; returns the series by market id and the time column used."""
    columns = [c for c in frame.columns if c != ROW]
    check_columns(PRICES_FILE, columns, ("market_id", "price"), PRICE_COLUMNS)
    time_column = _time_column(columns)
    has_outcome = "outcome" in columns
    outcome = ["outcome"] if has_outcome else []
    require_cells(frame, ["market_id", time_column, "price", *outcome], PRICES_FILE)
    _check_known_markets(frame, markets)
    usable = _usable_times(frame, time_column)
    frame = frame.with_columns(pl.col(time_column).replace_strict(usable).alias(_TIME))
    prices = parse_probabilities(frame, "price", PRICES_FILE)
    if has_outcome:
        _check_outcomes(frame, markets)
    check_unique(frame, ["market_id", _TIME, *outcome], PRICES_FILE, ["market_id", time_column, *outcome])
    if has_outcome:
        _check_complete(frame, markets)
    return _build_series(
        frame.rename({time_column: _TEXT}), markets, usable, prices, source, has_outcome
    ), time_column


def _time_column(columns: list[str]) -> str:
    present = [c for c in (DATE_COLUMN, OBSERVED_AT_COLUMN) if c in columns]
    if len(present) != 1:
        raise DatasetError(
            f"{PRICES_FILE}: expected exactly one time column, '{DATE_COLUMN}' (daily close, usable next day "
            f"00:00 UTC) or '{OBSERVED_AT_COLUMN}' (usable from that instant); found {present or 'none'}"
        )
    return present[0]


def _usable_times(frame: pl.DataFrame, column: str) -> dict[str, datetime]:
    if column == DATE_COLUMN:
        return {text: usable_from(day) for text, day in parse_dates(frame, column, PRICES_FILE).items()}
    return parse_times(frame, column, PRICES_FILE)


def _check_known_markets(frame: pl.DataFrame, markets: Mapping[str, Market]) -> None:
    hit = first_row(frame, ~pl.col("market_id").is_in(list(markets)))
    if hit is not None:
        problem = f"unknown market {hit['market_id']!r} (not in markets.csv; ids are venue:venue_id)"
        raise row_error(PRICES_FILE, int(str(hit[ROW])), "market_id", problem)


def _check_outcomes(frame: pl.DataFrame, markets: Mapping[str, Market]) -> None:
    pairs = frame.select("market_id", "outcome").unique(maintain_order=True).iter_rows()
    for market_id, outcome in pairs:
        outcomes = markets[market_id].outcomes
        if outcome not in outcomes:
            hit = first_row(frame, (pl.col("market_id") == market_id) & (pl.col("outcome") == outcome))
            assert hit is not None
            problem = f"{outcome!r} is not an outcome of {market_id} {list(outcomes)}"
            raise row_error(PRICES_FILE, int(str(hit[ROW])), "outcome", problem)


def _check_complete(frame: pl.DataFrame, markets: Mapping[str, Market]) -> None:
    """Each (market, time) prices every outcome, or only YES of a binary market."""
    groups = frame.group_by("market_id", _TIME).agg(pl.col("outcome"), pl.col(ROW).min())
    for market_id, _, given, row in groups.sort(ROW).iter_rows():
        market = markets[market_id]
        if set(given) == set(market.outcomes) or (market.is_binary and given == [YES]):
            continue
        problem = f"prices at this time cover {sorted(given)}; expected all of {list(market.outcomes)}"
        if market.is_binary:
            problem += " or YES alone"
        raise row_error(PRICES_FILE, int(row), "outcome", problem)


def _build_series(
    frame: pl.DataFrame,
    markets: Mapping[str, Market],
    usable: Mapping[str, datetime],
    prices: Mapping[str, Decimal],
    source: str,
    has_outcome: bool,
) -> dict[str, PriceSeries]:
    """Group the sorted rows into one ``PriceSnapshot`` per (market, time)."""
    outcome = pl.col("outcome") if has_outcome else pl.lit(None, dtype=pl.String)
    rows = frame.sort("market_id", _TIME, ROW).select("market_id", _TEXT, outcome.alias("o"), "price", ROW)
    grouped: dict[str, list[tuple[datetime, dict[str, Decimal], int]]] = {}
    for market_id, text, name, price, row in rows.iter_rows():
        when = usable[text]
        points = grouped.setdefault(market_id, [])
        if not points or points[-1][0] != when:
            points.append((when, {}, row))
        points[-1][1][name or markets[market_id].outcomes[0]] = prices[price]
    return {
        market_id: PriceSeries(
            times=tuple(when for when, _, _ in points),
            snapshots=tuple(
                _snapshot(markets[market_id], market_id, when, by_outcome, source)
                for when, by_outcome, _ in points
            ),
            first_row=points[0][2],
        )
        for market_id, points in grouped.items()
    }


def _snapshot(
    market: Market, market_id: str, when: datetime, prices: dict[str, Decimal], source: str
) -> PriceSnapshot:
    """``market_id`` is passed in: ``Market.market_id`` is recomputed on every access."""
    if market.is_binary and NO not in prices:
        prices[NO] = Decimal(1) - prices[YES]
    return PriceSnapshot(market_id=market_id, prices=prices, observed_at=when, source=source)
