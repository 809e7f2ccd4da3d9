"""What `arena cohort list`, `show` and `errors` print: tables that fit 80 columns without cutting
an id, a name or a hash, and the ``--json`` documents with the keys of docs/cli.md.

Ids, names and hashes are kept whole on one line (``no_wrap``), so they can be copied; a cohort's
name and an agent's kind and model go on a second line of the same cell rather than in columns
of their own, which is what lets the tables fit 80 columns.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena.cohorts.seats import seats
from arena.commands.terminal import fits, listing_table, plural, print_table
from arena.core.config_types import format_duration
from arena.reports.errors import AgentError
from arena.reports.overview import AgentSummary, CohortOverview, CohortSummary

if TYPE_CHECKING:
    from arena.cohorts.launch import Launched

CENT = Decimal("0.01")


def print_launched(console: Console, launched: Launched, *, now: datetime) -> None:
    """What launching a cohort did: its id, agents, hash, a live cohort's first round, warnings."""
    c = launched.config
    verb = "Launched" if launched.created else "Already launched:"
    agents = plural(len(seats(c)), "agent")
    console.print(f"{verb} cohort [bold]{escape(launched.cohort_id)}[/] ({c.mode}, {agents})")
    console.print(f"config sha256 {c.config_hash()}")
    if launched.work is not None:
        console.print(f"implies {launched.work.describe()}")
    if c.mode == "live" and c.start is not None:
        wait = max(c.start - now, timedelta(0))
        console.print(
            f"first round at {c.start:%Y-%m-%d %H:%M} UTC (in {_hours_minutes(wait)}), then every "
            f"{format_duration(c.schedule.every)}: {plural(c.schedule.rounds or 0, 'round')} in all, "
            "run by `arena serve`"
        )
    if launched.excluded:
        console.print(
            f"leakage guard: {launched.excluded} markets closing by an agent's knowledge cutoff are excluded"
        )
    for warning in launched.warnings:
        console.print(f"[yellow]warning:[/] {escape(warning)}")


def _hours_minutes(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def list_json(rows: Sequence[CohortSummary]) -> list[dict[str, Any]]:
    return [
        {
            "id": r.id,
            "name": r.name,
            "mode": r.mode,
            "status": r.status,
            "agents": r.agents,
            "rounds_done": r.rounds_done,
            "rounds_planned": None if r.rounds_planned == "end" else int(r.rounds_planned),
            "created_at": r.created_at.isoformat(),
            "queue": r.unit,
        }
        for r in rows
    ]


def print_list(console: Console, rows: Sequence[CohortSummary]) -> None:
    """One row per cohort: the id whole on the first line of its cell, the name under it; when an
    id is too long for that to fit the terminal, one block per cohort, the id on a line of its own."""
    table = _list_table(rows)
    if fits(console, table):
        print_table(console, table)
        return
    console.print("Cohorts, newest first")
    for r in rows:
        console.print(f"[bold]{escape(r.id)}[/]", soft_wrap=True)
        queued = f" · queue: {escape(r.unit)}" if r.unit else ""
        console.print(
            f"  {escape(r.name)} · {r.mode} · {r.status}{queued} · {plural(r.agents, 'agent')} · "
            f"rounds {r.rounds_done}/{r.rounds_planned} · created {r.created_at:%Y-%m-%d %H:%M} UTC",
            overflow="fold",
        )


def _list_table(rows: Sequence[CohortSummary]) -> Table:
    table = listing_table("Cohorts, newest first")
    table.add_column("Id / name", no_wrap=True)
    table.add_column("Mode")
    table.add_column("Status")
    table.add_column("Agents", justify="right", no_wrap=True)
    table.add_column("Rounds", justify="right", no_wrap=True)
    table.add_column("Created (UTC)")
    for r in rows:
        table.add_row(
            f"{escape(r.id)}\n[dim]{escape(r.name)}[/]",
            r.mode,
            r.status + (f"\nqueue: {escape(r.unit)}" if r.unit else ""),
            str(r.agents),
            f"{r.rounds_done}/{r.rounds_planned}",
            f"{r.created_at:%Y-%m-%d %H:%M}",
        )
    return table


def show_json(o: CohortOverview) -> dict[str, Any]:
    c = o.config
    return {
        "id": o.id,
        "name": c.name,
        "status": o.status,
        "mode": c.mode,
        "seed": c.seed,
        "start": None if c.start is None else c.start.isoformat(),
        "every": format_duration(c.schedule.every),
        "rounds_done": o.rounds_done,
        "rounds_planned": o.rounds_planned,
        "source": c.dataset if c.mode == "replay" else c.venue,
        "fills": c.fills.model,
        "prices": c.price_visibility.mode,
        "config_hash": o.config_hash,
        "code": o.git_commit,
        "excluded_markets": o.excluded,
        "errors": sum(a.errors for a in o.agents),
        "agents": [_agent_json(a) for a in o.agents],
        "stale_positions": o.stale,
        "empty_rounds": [{"round": index, "why": why} for index, why in o.empty_rounds],
    }


def _agent_json(a: AgentSummary) -> dict[str, Any]:
    return {
        "name": a.name,
        "kind": a.kind,
        "model": a.model,
        "mock": a.mock,
        "value": _number(a.value),
        "pnl": _number(a.pnl),
        "return_pct": _number(a.return_pct),
        "cash": _number(a.cash),
        "open_positions": a.open_positions,
        "bets": a.bets,
        "errors": a.errors,
        "missed": a.missed,
        "cost": float(a.cost),
    }


def print_show(console: Console, o: CohortOverview) -> None:
    c = o.config
    console.print(f"[bold]{escape(o.id)}[/]  {escape(c.name)}  status {o.status}  {c.mode}  seed {c.seed}")
    source = c.dataset if c.mode == "replay" else c.venue
    console.print(
        f"start {c.start:%Y-%m-%d %H:%M} UTC, every {format_duration(c.schedule.every)}, "
        f"rounds {o.rounds_done}/{o.rounds_planned or 'until the data ends'}, "
        f"source {source}, fills {c.fills.model}, prices {c.price_visibility.mode}"
    )
    console.print(f"config sha256 {o.config_hash}" + (f"   code {o.git_commit}" if o.git_commit else ""))
    if o.excluded:
        console.print(
            f"leakage guard: {o.excluded} markets excluded (closing by an agent's knowledge cutoff)"
        )
    paid = any(a.cost for a in o.agents)  # a column for provider spend only where there is some
    table = listing_table("Agents")
    table.add_column("Agent / kind, model")
    headers = ("Value $", "P/L $", "Return %", "Open", "Bets", "Errors", "Missed")
    for header in (*headers, *(("Cost $",) if paid else ())):
        table.add_column(header, justify="right", no_wrap=True)
    for a in o.agents:
        table.add_row(
            _agent_cell(a),
            money(a.value),
            money(a.pnl, signed=True),
            percent(a.return_pct),
            str(a.open_positions),
            str(a.bets),
            str(a.errors),
            str(a.missed),
            *((f"{a.cost:.4f}",) if paid else ()),
        )
    print_table(console, table)
    if o.empty_rounds:
        console.print(f"[yellow]{len(o.empty_rounds)} rounds asked nobody:[/]")
        for index, why in o.empty_rounds[-20:]:
            console.print(f"  round {index}: {escape(why)}", overflow="fold")
    errors = sum(a.errors for a in o.agents)
    if errors:
        listed = f"`arena cohort errors {escape(o.id)}` lists each with its message"
        console.print(f"{plural(errors, 'error')}: {listed}")
    if o.stale:
        console.print(f"[yellow]{len(o.stale)} positions are waiting for a resolution:[/]")
        for line in o.stale[:20]:
            console.print(f"  {escape(line)}")


def _agent_cell(a: AgentSummary) -> str:
    """The name, and under it the kind and (LLMs) the model, ``mock/…`` for the mock provider;
    nothing under a bot named after its kind (``kelly``)."""
    detail = a.kind + (f" {a.model}" if a.model else "")
    return escape(a.name) + ("" if detail == a.name else f"\n[dim]{escape(detail)}[/]")


def errors_json(errors: Sequence[AgentError]) -> list[dict[str, Any]]:
    return [e.as_json() for e in errors]


def print_errors(console: Console, cohort_id: str, errors: Sequence[AgentError]) -> None:
    """One block per error: round, time, agent, kind and markets on a line, the message under it."""
    if not errors:
        console.print(f"cohort {escape(cohort_id)}: no agent errors")
        return
    for e in errors:
        kind = f"{e.status} ({e.kind})" if e.kind else e.status
        markets = f"  market {', '.join(e.markets)}" if e.markets else ""
        console.print(
            f"round {e.round_index}  {e.at:%Y-%m-%d %H:%M}  [bold]{escape(e.agent)}[/]  {escape(kind)}"
            + escape(markets),
            soft_wrap=True,  # a long market id stays whole on the line
        )
        console.print(f"  {escape(e.message)}", overflow="fold")
    agents = len({e.agent for e in errors})
    console.print(f"{len(errors)} errors of {agents} {'agent' if agents == 1 else 'agents'}")


def money(value: Decimal | None, *, signed: bool = False) -> str:
    """Dollars to the cent with thousands separators; never ``-0.00`` (a cent-sized loss is -0.01)."""
    if value is None:
        return "—"
    rounded = value.quantize(CENT) + 0  # + 0 turns a negative zero into zero
    return f"{'+' if signed and rounded > 0 else ''}{rounded:,.2f}"


def percent(value: Decimal | None) -> str:
    if value is None:
        return "—"
    rounded = value.quantize(CENT) + 0
    return f"{rounded:+.2f}" if rounded else "0.00"


def _number(value: Decimal | None) -> float | None:
    return None if value is None else float(value.quantize(CENT))
