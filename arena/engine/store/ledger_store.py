"""Ledgers in the database: the fill log is the truth, the ``position`` table a derived cache.

``load_books`` rebuilds ledgers from their fills in commit order; ``write_fill_batches`` stores
new fills with the positions they touched; ``reconcile`` lists every cached figure that disagrees
with the fills. Every write first runs the fence (``lock_and_check`` or ``stale_books``): a ledger
built from a different number of fills than the database holds is never written from. Why:
docs/design/fill-log.md and docs/design/claims-and-fences.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import cache
from typing import Any

from sqlalchemy import event, func
from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session, col, select

from arena.db.models import AgentRow, FillRow, PortfolioSnapshotRow, PositionRow
from arena.db.one_of import one_of_param
from arena.db.pipeline import driver_form, read_together
from arena.db.upsert import write_rows
from portfolio import AgentId, Fill, FillKind, Ledger, Mark, MarketId, Money, Position, Price, Rules, Shares


class LedgerConflict(RuntimeError):
    """The agent's fill log changed under an in-memory ledger; reload it and try again."""


@dataclass
class AgentBook:
    """An agent's in-memory ledger, with what the database holds for it.

    ``fill_count``: how many fills the ledger was built from (the fence). ``stored_marks``: the
    committed mark of each open position's row, so ``marks.write_marks`` rewrites only moved ones.
    """

    agent_id: int
    ledger: Ledger
    fill_count: int
    stored_marks: dict[str, Mark | None] = field(default_factory=dict)


def remember_marks(session: Session, written: Sequence[tuple[AgentBook, str, Mark | None]]) -> None:
    """Once ``session`` commits, record the marks it wrote to position rows; a rolled-back
    transaction records nothing, so those rows are written again next time."""

    def committed_marks(_: Session) -> None:
        for book, position_id, mark in written:
            book.stored_marks[position_id] = mark

    if written:
        event.listen(session, "after_commit", committed_marks, once=True)


def fill_to_row(fill: Fill, *, agent_id: int, decision_id: int | None) -> dict[str, object]:
    """The ``fill`` row of a ledger fill (settlements carry no decision and no leg index)."""
    settle = fill.kind is FillKind.SETTLE
    return {
        "decision_id": None if settle else decision_id,
        "leg_index": None if settle else fill.leg_index,
        "agent_id": agent_id,
        "market_id": fill.market_id,
        "outcome": fill.outcome,
        "position_id": fill.position_id,
        "kind": fill.kind.value,
        "amount": fill.amount,
        "price": fill.price,
        "shares": fill.shares,
        "fee": fill.fee,
        "realized_pnl": fill.realized_pnl,
        "max_bet": fill.max_bet,
        "filled_at": fill.at,
    }


def row_to_fill(row: FillRow) -> Fill:
    return Fill(
        decision_id=None if row.decision_id is None else str(row.decision_id),
        leg_index=row.leg_index or 0,
        agent_id=AgentId(str(row.agent_id)),
        market_id=MarketId(row.market_id),
        outcome=row.outcome,
        position_id=row.position_id,
        kind=FillKind(row.kind),
        amount=Money(row.amount),
        price=None if row.price is None else Price(row.price),
        shares=Shares(row.shares),
        fee=Money(row.fee),
        realized_pnl=Money(row.realized_pnl or Decimal(0)),
        max_bet=None if row.max_bet is None else Money(row.max_bet),
        at=row.filled_at,
    )


def load_books(session: Session, rules: Rules, agent_ids: Sequence[int]) -> dict[int, AgentBook]:
    """Rebuild every agent's ledger from its fills (commit order) and its cached marks."""
    fills: dict[int, list[Fill]] = {a: [] for a in agent_ids}
    rows = session.exec(select(FillRow).where(col(FillRow.agent_id).in_(agent_ids)).order_by(col(FillRow.id)))
    for row in rows:
        fills[row.agent_id].append(row_to_fill(row))
    marks: dict[int, dict[str, Mark]] = {a: {} for a in agent_ids}
    stored: dict[int, dict[str, Mark | None]] = {a: {} for a in agent_ids}
    open_rows = session.exec(
        select(PositionRow).where(col(PositionRow.agent_id).in_(agent_ids), PositionRow.status == "open")
    )
    for pos in open_rows:
        mark = None
        if pos.last_price is not None and pos.last_marked_at is not None:
            mark = marks[pos.agent_id][pos.position_id] = Mark(
                Price(pos.last_price), pos.last_marked_at, pos.stale
            )
        stored[pos.agent_id][pos.position_id] = mark
    return {
        a: AgentBook(
            a,
            Ledger.from_fills(rules, fills[a], agent_id=AgentId(str(a)), marks=marks[a]),
            len(fills[a]),
            stored[a],
        )
        for a in agent_ids
    }


def lock_and_check(session: Session, books: Sequence[AgentBook]) -> None:
    """Lock the agents' rows (PostgreSQL; SQLite's writer lock already serialises) and verify that
    the database holds exactly the fills each ledger was built from."""
    for problem in stale_books(session, books).values():
        raise LedgerConflict(problem)


def stale_books(session: Session, books: Sequence[AgentBook]) -> dict[int, str]:
    """Lock the agents' rows and say, by agent id, why each stale ledger no longer matches.

    A ledger is stale when the database holds a different number of fills than it was built from.
    Unlike ``lock_and_check`` it raises nothing: a round phase stores the other agents' decisions
    and records these as conflicts.
    """
    ids = sorted(b.agent_id for b in books)
    counts = _locked_fill_counts(session, ids)
    return {
        book.agent_id: f"agent {book.agent_id}: the database holds {counts.get(book.agent_id, 0)} fills, "
        f"the ledger was built from {book.fill_count}"
        for book in books
        if counts.get(book.agent_id, 0) != book.fill_count
    }


# Built once per backend: the ledger fence counts fills several times a round and at every flush
# of marks (about 400 times in a 50-agent replay).
_FILL_COUNTS = {
    dialect: select(FillRow.agent_id, func.count())
    .where(one_of_param(col(FillRow.agent_id), "agent_ids", dialect))
    .group_by(col(FillRow.agent_id))
    for dialect in ("sqlite", "postgresql")
}


_LOCK_AGENTS = (
    select(AgentRow.id)
    .where(one_of_param(col(AgentRow.id), "agent_ids", "postgresql"))
    .order_by(col(AgentRow.id))
    .with_for_update()
)


def _locked_fill_counts(session: Session, agent_ids: Sequence[int]) -> dict[int, int]:
    """``fill_counts`` once the agents' rows are locked (SQLite: by the unit's ``BEGIN IMMEDIATE``)."""
    dialect = session.get_bind().dialect
    if dialect.name != "postgresql":
        return fill_counts(session, agent_ids)
    # Two statements in one pipeline, one wait: the count's snapshot is taken once the lock is
    # held, so it sees every fill of the writer before (a subquery's would predate the wait).
    params = {"agent_ids": list(agent_ids)}
    statements = [driver_form(dialect, query, params) for query in (_LOCK_AGENTS, _FILL_COUNTS["postgresql"])]
    _, counts = read_together(session, statements)
    return {a: int(n) for a, n in counts}


def fill_counts(session: Session, agent_ids: Sequence[int]) -> dict[int, int]:
    """How many fills each agent has in the database (agents without any are absent)."""
    query = _FILL_COUNTS[session.get_bind().dialect.name]
    return {a: int(n) for a, n in session.exec(query, params={"agent_ids": list(agent_ids)}).all()}


def write_fills(
    session: Session, book: AgentBook, fills: Sequence[Fill], *, decision_id: int | None, at: datetime
) -> None:
    """Insert ``fills`` (already applied to ``book.ledger``) and refresh the positions they touched.

    The caller has run ``lock_and_check`` in the same transaction; ``book.fill_count`` advances
    only once the transaction commits (see ``committed``).
    """
    write_fill_batches(session, [FillBatch(book, fills, decision_id)], at=at)


@dataclass(frozen=True)
class FillBatch:
    """Fills of one agent (already applied to its ledger), from one decision or a settlement."""

    book: AgentBook
    fills: Sequence[Fill]
    decision_id: int | None


def write_fill_batches(session: Session, batches: Sequence[FillBatch], *, at: datetime) -> None:
    """``write_fills`` for several agents: every fill in one INSERT, every touched position in one upsert.

    Fills are inserted in the order given, so fill ids keep commit order.
    """
    rows = [
        fill_to_row(f, agent_id=b.book.agent_id, decision_id=b.decision_id) for b in batches for f in b.fills
    ]
    if not rows:
        return
    touched = [
        (b.book, b.book.ledger.positions[p])
        for b in batches
        for p in sorted({f.position_id for f in b.fills})
    ]
    # positions first: a fill's foreign key names its position (checked as the INSERT ends in a
    # PostgreSQL unit that pipelines, ``arena.db.pipeline``)
    write_positions(session, [position_row(book.agent_id, p, at=at) for book, p in touched])
    fills = FillRow.__table__  # type: ignore[attr-defined]
    write_rows(session, fills.insert, rows, fills, shape=("insert",))
    remember_marks(session, [(book, p.position_id, p.mark) for book, p in touched])


def committed(book: AgentBook, fills: Sequence[Fill]) -> None:
    """Record that ``fills`` are now in the database."""
    book.fill_count += len(fills)


def write_positions(session: Session, rows: Sequence[dict[str, object]]) -> None:
    """Upsert position cache rows (``position_row``); a position given twice keeps its last row."""
    if rows:
        last = {(r["agent_id"], r["position_id"]): r for r in rows}  # one statement: no row twice
        # rows leaving the open state first: the partial unique index allows one open row per outcome
        ordered = sorted(last.values(), key=lambda r: (r["status"] == "open", str(r["position_id"])))
        dialect = session.get_bind().dialect.name
        table = PositionRow.__table__  # type: ignore[attr-defined]
        write_rows(session, lambda: _position_upsert(dialect), ordered, table, shape=("positions",))


@cache
def _position_upsert(dialect: str) -> Any:
    """One INSERT .. ON CONFLICT statement per dialect, built once: marks rewrite many rows a day."""
    table = PositionRow.__table__  # type: ignore[attr-defined]
    stmt = postgresql.insert(table) if dialect == "postgresql" else sqlite.insert(table)
    keys = ("agent_id", "position_id")
    updated = [c for c in POSITION_COLUMNS if c not in keys]
    return stmt.on_conflict_do_update(index_elements=list(keys), set_={c: stmt.excluded[c] for c in updated})


POSITION_COLUMNS = (
    "agent_id",
    "position_id",
    "market_id",
    "outcome",
    "status",
    "shares",
    "cost_basis",
    "realized_pnl",
    "last_price",
    "last_marked_at",
    "stale",
    "opened_at",
    "closed_at",
    "updated_at",
)


def position_row(agent_id: int, p: Position, *, at: datetime) -> dict[str, object]:
    return {
        "agent_id": agent_id,
        "position_id": p.position_id,
        "market_id": p.market_id,
        "outcome": p.outcome,
        "status": p.status.value,
        "shares": p.shares,
        "cost_basis": p.cost_basis,
        "realized_pnl": p.realized_pnl,
        "last_price": None if p.mark is None else p.mark.price,
        "last_marked_at": None if p.mark is None else p.mark.at,
        "stale": bool(p.mark is None or p.mark.stale) if p.is_open else False,
        "opened_at": p.opened_at,
        "closed_at": p.closed_at,
        "updated_at": at,
    }


def reconcile(session: Session, rules: Rules, agent_ids: Sequence[int]) -> list[str]:
    """Every disagreement between the caches and a replay of the fill log; empty means consistent.

    Checks each position row against the replayed position (status, shares, cost basis, realised
    P/L, exactly) and each stored portfolio snapshot's cash and realised P/L against the replay
    of the fills up to its time.
    """
    problems: list[str] = []
    books = load_books(session, rules, agent_ids)
    for agent_id in agent_ids:
        problems += _compare_positions(session, agent_id, books[agent_id].ledger)
        problems += _compare_snapshots(session, rules, agent_id)
    return problems


def _compare_positions(session: Session, agent_id: int, ledger: Ledger) -> list[str]:
    rows = {
        r.position_id: r for r in session.exec(select(PositionRow).where(PositionRow.agent_id == agent_id))
    }
    problems = [
        f"agent {agent_id}: position {pid} is in the fill log but not cached"
        for pid in ledger.positions
        if pid not in rows
    ]
    for pid, row in rows.items():
        replayed = ledger.positions.get(pid)
        if replayed is None:
            problems.append(f"agent {agent_id}: cached position {pid} has no fills")
            continue
        cached = (row.status, row.shares, row.cost_basis, row.realized_pnl)
        truth = (replayed.status.value, replayed.shares, replayed.cost_basis, replayed.realized_pnl)
        if cached != truth:
            problems.append(
                f"agent {agent_id}: position {pid} cached {cached} but the fill log gives {truth}"
            )
    return problems


def _compare_snapshots(session: Session, rules: Rules, agent_id: int) -> list[str]:
    fills = [
        row_to_fill(r)
        for r in session.exec(select(FillRow).where(FillRow.agent_id == agent_id).order_by(col(FillRow.id)))
    ]
    snapshots = session.exec(
        select(PortfolioSnapshotRow)
        .where(PortfolioSnapshotRow.agent_id == agent_id)
        .order_by(col(PortfolioSnapshotRow.marked_at))
    ).all()
    return [
        problem
        for snap in snapshots
        if (problem := _snapshot_problem(agent_id, snap, _cash_and_realized(rules, fills, snap.marked_at)))
    ]


def _cash_and_realized(rules: Rules, fills: Sequence[Fill], at: datetime) -> tuple[Decimal, Decimal]:
    upto = [f for f in fills if f.at <= at]
    cash = rules.bankroll + sum((f.cash_delta for f in upto), Decimal(0))
    return cash, sum((f.realized_pnl for f in upto), Decimal(0))


def _snapshot_problem(
    agent_id: int, snap: PortfolioSnapshotRow, truth: tuple[Decimal, Decimal]
) -> str | None:
    if (snap.cash, snap.realized_pnl) == truth:
        return None
    return (
        f"agent {agent_id}: snapshot at {snap.marked_at.isoformat()} has cash {snap.cash}, "
        f"realised {snap.realized_pnl}; "
        f"the fill log gives {truth[0]}, {truth[1]}"
    )
