"""``prices.csv``: when each price became known, as sorted per-market series kept in columns.

A row holds ``market_id``, one time column and ``price`` (plus ``outcome`` when present):
- ``date`` (YYYY-MM-DD): a daily close, usable from 00:00 UTC of the next day;
- ``observed_at`` (ISO 8601 with zone): a price usable from that instant.
Without an ``outcome`` column each price is the first outcome's. A binary market may give only
its first outcome (YES); NO is then 1 − YES. Other markets must price every outcome at each time.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping
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
from markets.replay.price_series import PriceColumns, PriceSeries
from markets.types import YES, Market

_TIME = "_t"  # parsed time, for sorting and duplicate checks inside polars


def parse_prices(
    frame: pl.DataFrame, markets: Mapping[str, Market], source: str
) -> tuple[dict[str, PriceSeries], str]:
    """Check and convert ``prices.csv``; returns the series by market id and the time column used."""
    columns = [c for c in frame.columns if c != ROW]
    check_columns(PRICES_FILE, columns, ("market_id", "price"), PRICE_COLUMNS)
    time_column = _time_column(columns)
    if frame.height == 0:
        raise DatasetError(f"{PRICES_FILE}: no price rows, only the header (a replay needs prices)")
    has_outcome = "outcome" in columns
    outcome = ["outcome"] if has_outcome else []
    try:
        _check_known_markets(frame, markets)
        usable = _usable_times(frame, time_column)
        prices = parse_probabilities(frame, "price", PRICES_FILE)
    except DatasetError:
        # A blank id, time or price fails these checks anyway, so the scan for blank cells (a
        # pass over every cell) runs only then, to name the problem plainly: "is empty".
        require_cells(frame, ["market_id", time_column, "price"], PRICES_FILE)
        raise
    require_cells(frame, outcome, PRICES_FILE)  # any non-blank text may name an outcome
    times = pl.Series(list(usable.values()))
    frame = frame.with_columns(pl.lit(times).gather(_code(time_column, usable)).alias(_TIME))
    if has_outcome:
        _check_outcomes(frame, markets)
        check_unique(frame, ["market_id", _TIME, *outcome], PRICES_FILE, ["market_id", time_column, *outcome])
        _check_complete(frame, markets)
    return _build_series(frame, markets, prices, source, time_column, has_outcome), time_column


def _code(column: str, texts: Iterable[str]) -> pl.Expr:
    """Each cell of ``column`` as the index of its text among ``texts`` (distinct, and holding
    every cell's text): an ``Enum`` cast, about half the cost of ``replace_strict``'s lookup."""
    return pl.col(column).cast(pl.Enum(list(texts))).to_physical()


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
    prices: Mapping[str, Decimal],
    source: str,
    time_column: str,
    has_outcome: bool,
) -> dict[str, PriceSeries]:
    """Sort the rows into ``PriceColumns`` (in polars, no Python object per row) and give each
    market its ``PriceSeries`` slice. Without an outcome column, the sort also proves that no
    (market, time) repeats; ``check_unique`` then only names the first repeat."""
    if has_outcome:
        outcome_codes = {f"{m}\x1f{o}": i for m in markets for i, o in enumerate(markets[m].outcomes)}
        outcome = pl.concat_str("market_id", pl.lit("\x1f"), "outcome").replace_strict(outcome_codes)
    else:
        outcome = pl.lit(0)
    market_ids = sorted(markets)  # every id is known by now (``_check_known_markets``)
    rows = frame.select(  # coded first, so the sort moves integers rather than text: a market's
        # code is its id's place in ``market_ids``, so codes sort as the ids do
        _code("market_id", market_ids).alias("m"),
        pl.col(_TIME).dt.epoch("us").alias("us"),
        outcome.cast(pl.Int32).alias("o"),
        _code("price", prices).cast(pl.Int32).alias("p"),
        ROW,
    ).sort("m", "us", ROW)
    new_market = pl.col("m").ne_missing(pl.col("m").shift(1))  # rows are sorted:
    rows = rows.with_columns(  # a new point or market starts where a key differs from the row above
        point=new_market | pl.col("us").ne_missing(pl.col("us").shift(1)), market=new_market
    )
    points = rows.with_row_index("r").filter("point")
    if not has_outcome and points.height < rows.height:  # a row repeats the market and time above it
        check_unique(frame, ["market_id", _TIME], PRICES_FILE, ["market_id", time_column])
    first_prices = rows.filter(pl.col("o") == 0)["p"]
    assert first_prices.len() == points.height, "every point prices its market's first outcome"
    columns = PriceColumns(
        times=points["us"].to_numpy(),
        starts=_ints(points["r"].append(pl.Series([rows.height], dtype=points["r"].dtype))),
        first_prices=_ints(first_prices),
        outcomes=_ints(rows["o"]),
        prices=_ints(rows["p"]),
        decimals=list(prices.values()),
        source=source,
    )
    firsts = [
        (market_ids[code], start, row)
        for code, start, row in points.with_row_index("i").filter("market").select("m", "i", ROW).rows()
    ]
    bounds = [i for _, i, _ in firsts[1:]] + [points.height]
    return {
        market_id: PriceSeries(columns, markets[market_id], market_id, start, stop, row)
        for (market_id, start, row), stop in zip(firsts, bounds, strict=True)
    }


def _ints(values: pl.Series) -> array[int]:
    """A compact array of Python-indexable integers, straight from polars' buffer. These are row
    numbers and indices into a market's outcomes or the distinct prices, so 32 bits hold them
    (the cast fails loudly past 2**31 rows) at half the memory of 64 for the whole replay."""
    out = array("i")
    out.frombytes(values.cast(pl.Int32).to_numpy().tobytes())
    return out
