"""Prices as the database decodes them, against the row-by-row reading they replaced (SQLite and
PostgreSQL, migrated to head).

``reference_prices`` is that reading, kept here as the oracle: each row's ``prices_json`` parsed
in Python, every value read as ``Decimal(str(v))``, the first observation of an instant kept.
The loader must give the same frame, rows in the same order, and the same error.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

import polars as pl
import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.engine import Connection

from arena.db.engine import session_scope
from arena.db.models import MarketSnapshotRow, RoundMarketRow, RoundRow
from arena.db.read_tables import market_snapshot, round_market
from arena.scoring.load.frames import PRICES
from arena.scoring.load.markets import binary_markets, prices
from arena.scoring.load.rows import LoadError, chunked, frame_of, outcome_prices
from tests.scoring.stored import T0, _cohort, _market


def reference_prices(connection: Connection, market_ids: list[str], binary: set[str]) -> pl.DataFrame:
    """The loader before the database decoded prices: rows through the JSON type, values in Python."""
    snapshots = chunked(
        connection,
        market_ids,
        lambda ids: (
            select(
                market_snapshot.c.market_id,
                market_snapshot.c.source,
                market_snapshot.c.observed_at,
                market_snapshot.c.prices_json,
            )
            .where(market_snapshot.c.market_id.in_(ids))
            .order_by(market_snapshot.c.market_id, market_snapshot.c.observed_at, market_snapshot.c.id)
        ),
    )
    shown = chunked(
        connection,
        market_ids,
        lambda ids: (
            select(round_market.c.market_id, round_market.c.observed_at, round_market.c.prices_json)
            .where(round_market.c.market_id.in_(ids))
            .order_by(round_market.c.market_id, round_market.c.observed_at, round_market.c.round_id)
        ),
    )
    observations = [(r.market_id, "round", r.observed_at, r.prices_json) for r in shown]
    observations += sorted(
        ((r.market_id, r.source, r.observed_at, r.prices_json) for r in snapshots), key=lambda r: r[1]
    )
    rows: dict[tuple[str, str, Any], float] = {}
    for market_id, _source, observed_at, stated in observations:
        for outcome, price in outcome_prices(market_id, stated, market_id in binary).items():
            rows.setdefault((market_id, outcome, observed_at), price)
    return PRICES.conform(frame_of([(m, o, at, p) for (m, o, at), p in rows.items()], PRICES))


class Arena:
    """Markets, rounds and stored prices, written through the models as the arena writes them."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.rounds: list[int] = []
        with session_scope(engine) as session:
            session.add(_cohort("c1", {}))

    def markets(self, outcomes: list[str], *market_ids: str) -> None:
        with session_scope(self.engine) as session:
            for market_id in market_ids:
                session.add(_market(market_id, outcomes))

    def round(self) -> int:
        """A new round of the cohort; its id."""
        with session_scope(self.engine) as session:
            row = RoundRow(cohort_id="c1", round_index=len(self.rounds), scheduled_at=T0, status="done")
            session.add(row)
            session.flush()
            assert row.id is not None
            self.rounds.append(row.id)
            return row.id

    def shown(self, round_id: int, market_id: str, at: datetime, prices: Any) -> None:
        with session_scope(self.engine) as session:
            session.add(
                RoundMarketRow(
                    round_id=round_id, market_id=market_id, source="clob", observed_at=at, prices_json=prices
                )
            )

    def snapshot(self, market_id: str, source: str, at: datetime, prices: Any) -> int:
        with session_scope(self.engine) as session:
            row = MarketSnapshotRow(market_id=market_id, source=source, observed_at=at, prices_json=prices)
            session.add(row)
            session.flush()
            assert row.id is not None
            return row.id

    def raw_snapshot(self, market_id: str, source: str, at: datetime, document: str) -> None:
        """A snapshot whose ``prices_json`` is exactly ``document`` (JSON text the models never write)."""
        row_id = self.snapshot(market_id, source, at, {})
        value = "CAST(:doc AS JSONB)" if self.engine.dialect.name == "postgresql" else ":doc"
        with self.engine.begin() as connection:
            connection.execute(
                text(f"UPDATE market_snapshot SET prices_json = {value} WHERE id = :id"),  # noqa: S608
                {"doc": document, "id": row_id},
            )

    def both(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        """(loader, oracle) over every market with a price, as ``load_frames`` asks for them."""
        with self.engine.connect() as connection:
            ids = sorted(
                set(connection.execute(select(market_snapshot.c.market_id)).scalars())
                | set(connection.execute(select(round_market.c.market_id)).scalars())
            )
            binary = binary_markets(connection, ids)
            return prices(connection, ids, binary), reference_prices(connection, ids, binary)

    def errors(self) -> tuple[str, str]:
        """(loader's, oracle's) LoadError messages; both must raise."""
        with self.engine.connect() as connection:
            ids = sorted(set(connection.execute(select(market_snapshot.c.market_id)).scalars()))
            binary = binary_markets(connection, ids)
            with pytest.raises(LoadError) as loaded:
                prices(connection, ids, binary)
            with pytest.raises(LoadError) as reference:
                reference_prices(connection, ids, binary)
        return str(loaded.value), str(reference.value)


def _same(loaded: pl.DataFrame, reference: pl.DataFrame) -> None:
    assert loaded.schema == PRICES.schema
    assert PRICES.conform(loaded).equals(loaded)  # unique on (market, outcome, instant), prices in [0, 1]
    assert loaded.rows() == reference.rows()  # the same rows, the same floats, in the same order


@pytest.fixture
def arena(engine: Engine) -> Arena:
    return Arena(engine)


def test_binary_markets_keep_yes_and_others_every_outcome(arena: Arena) -> None:
    arena.markets(["YES", "NO"], "polymarket:yes", "polymarket:no", "polymarket:both", "polymarket:odd")
    arena.markets(["A", "B", "C"], "polymarket:multi")
    arena.markets(["YES", "NO", "MAYBE"], "manifold:three")  # named YES/NO, but not binary
    for hour in range(3):
        at = T0 + timedelta(hours=hour)
        arena.snapshot("polymarket:yes", "gamma", at, {"YES": f"0.{hour + 1}"})
        arena.snapshot("polymarket:no", "gamma", at, {"NO": f"0.{hour + 6}"})  # YES is 1 − NO
        arena.snapshot("polymarket:both", "gamma", at, {"NO": "0.7", "YES": "0.3"})
        arena.snapshot("polymarket:multi", "gamma", at, {"C": "0.5", "A": "0.2", "B": "0.3"})
        arena.snapshot("manifold:three", "gamma", at, {"YES": "0.2", "NO": "0.3", "MAYBE": "0.5"})
    arena.snapshot("polymarket:odd", "gamma", T0, {"MAYBE": "0.5"})  # neither side: no price
    arena.snapshot("polymarket:odd", "clob", T0, {})
    loaded, reference = arena.both()
    _same(loaded, reference)
    assert loaded.filter(pl.col("market_id") == "polymarket:no")["price"].to_list() == [
        pytest.approx(0.4),
        pytest.approx(0.3),
        pytest.approx(0.2),
    ]
    assert loaded.filter(pl.col("market_id") == "polymarket:multi").height == 3 * 3
    assert set(loaded.filter(pl.col("market_id") == "manifold:three")["outcome"]) == {"YES", "NO", "MAYBE"}


def test_the_round_then_sources_by_name_win_an_instant(arena: Arena) -> None:
    """Rounds first (lowest round first), then sources in code point order, then by id."""
    arena.markets(["YES", "NO"], "polymarket:b")
    arena.markets(["A", "B"], "polymarket:m")
    first, second = arena.round(), arena.round()
    arena.shown(second, "polymarket:b", T0, {"YES": "0.41"})
    arena.shown(first, "polymarket:b", T0, {"NO": "0.6"})  # the lowest round: YES 0.4 wins
    arena.shown(second, "polymarket:m", T0, {"A": "0.3"})  # A from the round; B from a source
    for source, yes in [("gamma", "0.5"), ("Gamma", "0.51"), ("äpi", "0.52"), ("clob", "0.53")]:
        arena.snapshot("polymarket:b", source, T0, {"YES": yes})
        arena.snapshot("polymarket:b", source, T0 + timedelta(hours=1), {"NO": yes})
        arena.snapshot("polymarket:m", source, T0, {"A": yes, "B": yes})
    loaded, reference = arena.both()
    _same(loaded, reference)
    at = {(m, o, t): p for m, o, t, p in loaded.rows()}
    assert at[("polymarket:b", "YES", T0)] == pytest.approx(0.4)
    assert at[("polymarket:b", "YES", T0 + timedelta(hours=1))] == pytest.approx(1 - 0.51)  # "Gamma" < "clob"
    assert (at[("polymarket:m", "A", T0)], at[("polymarket:m", "B", T0)]) == (0.3, 0.51)


def test_json_numbers_and_integers_read_as_the_strings_do(arena: Arena) -> None:
    arena.markets(["YES", "NO"], "polymarket:n", "polymarket:i")
    arena.markets(["A", "B", "C"], "polymarket:m")
    numbers = [0.53, 0.1, 0.30000000000000004, 1e-07, 0.123456789012345678, 2 / 3, 0.0, 1.0]
    for hour, number in enumerate(numbers):
        at = T0 + timedelta(hours=hour)
        arena.snapshot("polymarket:n", "gamma", at, {"YES": number})
        arena.snapshot("polymarket:n", "clob", at, {"NO": number})
        arena.snapshot("polymarket:m", "gamma", at, {"A": number, "B": str(number), "C": f"{number:.17g}"})
    arena.snapshot("polymarket:i", "gamma", T0, {"YES": 1})
    arena.snapshot("polymarket:i", "gamma", T0 + timedelta(hours=1), {"NO": 1})
    arena.snapshot("polymarket:i", "gamma", T0 + timedelta(hours=2), {"YES": 0, "NO": 1})
    arena.snapshot("polymarket:i", "gamma", T0 + timedelta(hours=3), {"YES": "1", "NO": "0"})
    arena.snapshot("polymarket:i", "gamma", T0 + timedelta(hours=4), {"YES": "1e-3", "NO": "+.999"})
    loaded, reference = arena.both()
    _same(loaded, reference)
    assert loaded.filter(pl.col("market_id") == "polymarket:m")["price"].to_list() == [
        n for n in numbers for _ in range(3)
    ]


def test_a_name_given_twice_keeps_its_last_value(arena: Arena) -> None:
    """JSON the arena never writes: SQLite lists both members, a JSON reader keeps the last."""
    arena.markets(["A", "B"], "polymarket:m")
    arena.markets(["YES", "NO"], "polymarket:b")
    arena.raw_snapshot("polymarket:m", "gamma", T0, '{"A": "0.1", "B": "0.2", "A": 0.3}')
    arena.raw_snapshot("polymarket:b", "gamma", T0, '{"YES": "x", "NO": "0.6", "YES": "0.25"}')
    loaded, reference = arena.both()
    _same(loaded, reference)
    assert loaded.rows() == [
        ("polymarket:b", "YES", T0, 0.25),
        ("polymarket:m", "A", T0, 0.3),
        ("polymarket:m", "B", T0, 0.2),
    ]


@pytest.mark.parametrize("value", ["abc", "", True, None, {"p": "0.5"}, ["0.5"], "0x1p-1"])
def test_a_non_number_is_named_in_one_line(arena: Arena, value: Any) -> None:
    arena.markets(["YES", "NO"], "polymarket:ok", "polymarket:bad")
    arena.snapshot("polymarket:ok", "gamma", T0, {"YES": "0.5"})
    arena.snapshot("polymarket:bad", "gamma", T0, {"YES": "0.5", "NO": value})  # the NO side is checked too
    loaded, reference = arena.errors()
    assert loaded == reference
    assert loaded.startswith("price of 'polymarket:bad': prices_json {") and "\n" not in loaded


@pytest.mark.parametrize("value", [" 0.5\n", "0.2_5", "٠.٥", "NaN1", "sNaN"])
def test_a_number_only_decimal_read_is_refused(arena: Arena, value: str) -> None:
    """Decided: a string Python's Decimal took (spaces around, "_" between digits, non-ASCII digits,
    a NaN payload) but float() and the venues never write is an error, not a guess. The old reading
    took all but sNaN (a ValueError there)."""
    arena.markets(["YES", "NO"], "polymarket:bad")
    arena.snapshot("polymarket:bad", "gamma", T0, {"YES": value})
    with arena.engine.connect() as connection, pytest.raises(LoadError) as caught:
        prices(connection, ["polymarket:bad"], {"polymarket:bad"})
    assert (
        str(caught.value) == f"price of 'polymarket:bad': prices_json {{'YES': {value!r}}} holds a non-number"
    )


@pytest.mark.parametrize("document", [["0.5"], [], "0.5", 0.5, None])
def test_prices_that_are_not_an_object_are_named(arena: Arena, document: Any) -> None:
    """The old reading failed on these with an AttributeError; now a LoadError, on both backends."""
    arena.markets(["YES", "NO"], "polymarket:bad")
    arena.snapshot("polymarket:bad", "gamma", T0, document)
    with arena.engine.connect() as connection, pytest.raises(LoadError) as caught:
        prices(connection, ["polymarket:bad"], {"polymarket:bad"})
    assert str(caught.value) == f"price of 'polymarket:bad': prices_json {document!r} is not an object"


def test_more_markets_than_one_query_holds(arena: Arena) -> None:
    """1,100 markets: three chunks of ``IN`` ids, rounds and snapshots, in the old order."""
    binary = [f"polymarket:b{i:04d}" for i in range(700)]
    multi = [f"manifold:M{i:04d}" for i in range(400)]  # upper case: another order than the ids' own
    arena.markets(["YES", "NO"], *binary)
    arena.markets(["A", "B"], *multi)
    shown = arena.round()
    with session_scope(arena.engine) as session:
        for i, market_id in enumerate(binary + multi):
            yes = Decimal(i % 97 + 1) / 100
            side = {"YES": str(yes)} if i % 3 else {"NO": str(1 - yes)}
            stated = side if market_id in binary else {"B": str(1 - yes), "A": str(yes)}
            session.add(
                MarketSnapshotRow(market_id=market_id, source="gamma", observed_at=T0, prices_json=stated)
            )
            if i % 5 == 0:
                session.add(
                    RoundMarketRow(
                        round_id=shown, market_id=market_id, source="clob", observed_at=T0, prices_json=stated
                    )
                )
    loaded, reference = arena.both()
    _same(loaded, reference)
    assert loaded.height == 700 + 2 * 400


def test_no_markets_no_prices(engine: Engine) -> None:
    with engine.connect() as connection:
        assert prices(connection, [], set()).schema == PRICES.schema
        assert prices(connection, [], set()).is_empty()
