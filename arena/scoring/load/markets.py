"""Market-side scoring frames: which markets are binary, resolutions with their winner, prices.

- Binary markets keep the YES price (NO is 1 − YES, as fills use it); where a source gives only
  NO, YES is 1 − NO. A NO-only statement q on a binary market becomes YES 1 − q.
- Prices are every price the arena observed for the markets involved: recorded market snapshots
  and the prices shown in rounds. Two sources at the same instant: the round's price (what agents
  saw) wins, then sources in name order.
- Prices are read column-wise: the database takes each ``prices_json`` apart into one row per
  outcome (SQLite ``json_each``, PostgreSQL ``jsonb_each_text``) and polars reads the numbers.
  A price is a JSON number or a decimal string (``"0.53"``, ``"1e-3"``, ``"inf"``, ``"nan"``); a
  string only Python's ``Decimal`` reads (spaces around, ``_`` between digits, non-ASCII digits)
  or a ``prices_json`` that is not an object is an error, never read as some other number.
- Resolutions are read with their winner: the outcome paying $1 (``OUTCOME``), the kind itself
  (``YES``/``NO``), none for ``VOID``/``5050``; payouts that disagree are an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import polars as pl
from sqlalchemy import (
    Float,
    Integer,
    Select,
    String,
    case,
    cast,
    column,
    func,
    null,
    or_,
    select,
    true,
    type_coerce,
)
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.expression import FromClause, TableClause

from arena.db.read_tables import market, market_snapshot, resolution, round_market
from arena.scoring.load.frames import PRICES, RESOLUTIONS
from arena.scoring.load.rows import LoadError, chunked, chunked_frame, frame_of

BINARY = ["YES", "NO"]
ROUND_SOURCE = "round"
_OBSERVATION = ["shown", "id"]  # one observed prices_json: a round's (shown) or a snapshot's, by row id


def binary_markets(connection: Connection, market_ids: list[str]) -> set[str]:
    rows = chunked(
        connection,
        market_ids,
        lambda ids: select(market.c.id, market.c.outcomes_json).where(market.c.id.in_(ids)),
    )
    return {r.id for r in rows if list(r.outcomes_json) == BINARY}


def binary_on_yes(forecasts: pl.DataFrame, binary: set[str]) -> pl.DataFrame:
    """Binary statements as YES: the YES value if stated, else 1 − the NO value."""
    return _on_yes(forecasts, binary, per=["cohort_id", "agent", "market_id", "stated_at"], value="p")


def _on_yes(frame: pl.DataFrame, binary: set[str], *, per: list[str], value: str) -> pl.DataFrame:
    """``frame``'s binary markets on YES: per group ``per`` (one statement), the YES ``value`` if
    there is one, else 1 − the NO ``value``; other markets keep every outcome, in their order."""
    on_binary = pl.col("market_id").is_in(list(binary))
    has_yes = (pl.col("outcome") == "YES").any().over(per)
    keep = ~on_binary | (pl.col("outcome") == "YES") | ((pl.col("outcome") == "NO") & ~has_yes)
    flipped = pl.when(on_binary & (pl.col("outcome") == "NO"))
    return frame.filter(keep).with_columns(
        flipped.then(1.0 - pl.col(value)).otherwise(pl.col(value)).alias(value),
        outcome=flipped.then(pl.lit("YES")).otherwise(pl.col("outcome")),
    )


def resolutions(connection: Connection, market_ids: list[str]) -> pl.DataFrame:
    rows = chunked(
        connection,
        market_ids,
        lambda ids: (
            select(
                resolution.c.market_id,
                resolution.c.kind,
                resolution.c.payouts_json,
                resolution.c.resolved_at,
            )
            .where(resolution.c.market_id.in_(ids))
            .order_by(resolution.c.market_id)
        ),
    )
    table = [(r.market_id, r.kind, _winner(r.market_id, r.kind, r.payouts_json), r.resolved_at) for r in rows]
    return frame_of(table, RESOLUTIONS)


def _winner(market_id: str, kind: str, payouts: dict[str, str]) -> str | None:
    """The outcome that won, checked against the payouts (all 0 but the winner's 1)."""
    values = {outcome: Decimal(str(v)) for outcome, v in payouts.items()}
    winners = [o for o, v in values.items() if v == 1]
    if kind in ("VOID", "5050"):
        expected_ok = kind == "VOID" or all(v == Decimal("0.5") for v in values.values())
        winner = None
    else:
        winner = kind if kind in BINARY else (winners[0] if len(winners) == 1 else None)
        expected_ok = winner is not None and winners == [winner] and all(v in (0, 1) for v in values.values())
    if not expected_ok:
        raise LoadError(f"resolution of {market_id!r}: payouts_json {payouts} do not fit kind {kind}")
    return winner


def prices(connection: Connection, market_ids: list[str], binary: set[str]) -> pl.DataFrame:
    """Every observed price of ``market_ids`` as the ``PRICES`` frame: binary markets on YES.

    Where observations of one instant give an outcome's price, the first in priority order wins:
    the rounds' (lowest round first), then the snapshots' by source name, then by id. Rows come in
    that order too (an observation's outcomes as its ``prices_json`` lists them), one row per
    (market, outcome, instant). A price that is not a number raises ``LoadError``.
    """
    stated = _priced(connection, _stated(connection, market_ids))
    on_yes = _on_yes(stated, binary, per=_OBSERVATION, value="price")
    first = on_yes.unique(["market_id", "outcome", "observed_at"], keep="first", maintain_order=True)
    return first.select(c.name for c in PRICES.columns)


def _stated(connection: Connection, market_ids: list[str]) -> pl.DataFrame:
    """One row per outcome of every observation of ``market_ids``, in priority order: ``shown``,
    ``id``, ``market_id``, ``observed_at``, ``outcome`` and the price as stored (``_Outcomes``).

    An observation whose ``prices_json`` is not an object is one row with a null outcome."""
    dialect = connection.dialect.name
    shown = chunked_frame(connection, market_ids, lambda ids: _outcomes(round_market, dialect, ids))
    recorded = chunked_frame(connection, market_ids, lambda ids: _outcomes(market_snapshot, dialect, ids))
    # The database orders the observations (an index scan on SQLite, no sort); an observation's
    # outcomes, adjacent, are put in their order here. Sources go by code point, as Python sorts.
    observation = pl.col("id").rle_id()
    shown = shown.sort(observation, "position").with_columns(shown=True)
    recorded = recorded.sort("source", observation, "position").with_columns(shown=False)
    columns = [*_OBSERVATION, "market_id", "observed_at", "outcome", "number", "text"]
    return pl.concat([shown.select(columns), recorded.select(columns)])


def _outcomes(table: TableClause, dialect: str, market_ids: list[str]) -> Select[Any]:
    """The outcomes of ``table``'s rows (rounds' or snapshots') for ``market_ids``, ordered by
    market, instant and round (snapshots: id), with each outcome's position in its row."""
    c = table.c
    decoded = _Outcomes.of(table, dialect)
    query = (
        select(
            c.id, c.market_id, c.observed_at, decoded.outcome, decoded.number, decoded.text, decoded.position
        )
        .select_from(decoded.joined)
        .where(c.market_id.in_(market_ids), decoded.kept)
        .order_by(c.market_id, c.observed_at, c.round_id if table is round_market else c.id)
    )
    return query.add_columns(c.source) if table is market_snapshot else query


@dataclass(frozen=True)
class _Outcomes:
    """A table's ``prices_json`` taken apart by the database: each row joined to its outcomes.

    A price comes as ``number`` (a JSON number, as SQLite reads it) or ``text`` (a JSON string;
    on PostgreSQL a number too, as its exact digits); no other JSON value reads as a number.
    """

    joined: FromClause
    outcome: ColumnElement[str]  # null on the row of a prices_json that is not an object
    number: ColumnElement[float]
    text: ColumnElement[str]
    position: ColumnElement[int]  # of the outcome in its object
    kept: ColumnElement[bool]  # the outcomes, and one row for a prices_json that is not an object

    @staticmethod
    def of(table: TableClause, dialect: str) -> _Outcomes:
        return _postgresql(table) if dialect == "postgresql" else _sqlite(table)


def _sqlite(table: TableClause) -> _Outcomes:
    """``json_each``: an object's members have text keys (an array's items numbers, a lone value
    none); a number's ``value`` is SQLite's REAL or INTEGER, true and false are 1 and 0."""
    prices = table.c.prices_json
    each = func.json_each(prices).table_valued(
        column("key"), column("value"), column("type", String), column("id", Integer)
    )
    return _Outcomes(
        joined=table.outerjoin(each, true()),
        outcome=type_coerce(case((func.typeof(each.c.key) == "text", each.c.key)), String).label("outcome"),
        number=type_coerce(case((each.c.type.in_(["integer", "real"]), each.c.value)), Float).label("number"),
        text=type_coerce(case((each.c.type == "text", each.c.value)), String).label("text"),
        position=each.c.id.label("position"),
        kept=or_(each.c.key.is_not(None), func.json_type(prices) != "object"),
    )


def _postgresql(table: TableClause) -> _Outcomes:
    """``jsonb_each_text`` (the column is JSONB): a number as its exact digits, ``true`` or
    ``{...}`` as JSON text no number reads, JSON ``null`` as NULL."""
    prices = table.c.prices_json
    is_object = func.jsonb_typeof(prices) == "object"
    # jsonb_each_text refuses a non-object: it gets NULL instead (no rows), the LEFT JOIN keeps the row.
    # render_derived names the columns (AS anon(key, value, position)), as WITH ORDINALITY needs.
    each = (
        func.jsonb_each_text(case((is_object, prices)))
        .table_valued(column("key", String), column("value", String), with_ordinality="position")
        .render_derived()
    )
    return _Outcomes(
        joined=table.outerjoin(each, true()),
        outcome=each.c.key.label("outcome"),
        number=cast(null(), Float).label("number"),  # every number comes as text
        text=each.c.value.label("text"),
        position=type_coerce(each.c.position, Integer).label("position"),
        kept=or_(each.c.key.is_not(None), ~is_object),
    )


def _priced(connection: Connection, stated: pl.DataFrame) -> pl.DataFrame:
    """``stated`` with each outcome's ``price``, or ``LoadError`` naming the first observation (in
    priority order) whose ``prices_json`` is not an object of numbers."""
    # SQLite lists every member of an object; a name given twice keeps its last value, as a JSON
    # reader (and PostgreSQL's jsonb) does, in its first place. Never written by the arena.
    member = [*_OBSERVATION, "outcome"]
    if stated.select(pl.struct(member).is_duplicated().any()).item():
        last = pl.col("number", "text").last().over(member)
        stated = stated.with_columns(last).unique(member, keep="first", maintain_order=True)
    # A decimal string reads as Python's float() reads it (correctly rounded). One that Decimal also
    # took, with spaces around, "_" between digits or non-ASCII digits, is refused, never guessed.
    priced = stated.with_columns(price=pl.coalesce("number", pl.col("text").cast(pl.Float64, strict=False)))
    if priced["price"].null_count() or priced["outcome"].null_count():
        bad = priced.filter(pl.col("price").is_null() | pl.col("outcome").is_null()).row(0, named=True)
        raise _not_prices(connection, bad["shown"], bad["id"], bad["market_id"])
    return priced


def _not_prices(connection: Connection, shown: bool, row_id: int, market_id: str) -> LoadError:
    """The error naming an observation's market and its ``prices_json`` (as a JSON reader reads it)."""
    table = round_market if shown else market_snapshot
    prices = connection.execute(select(table.c.prices_json).where(table.c.id == row_id)).scalar_one()
    what = "holds a non-number" if isinstance(prices, dict) else "is not an object"
    return LoadError(f"price of {market_id!r}: prices_json {prices!r} {what}")
