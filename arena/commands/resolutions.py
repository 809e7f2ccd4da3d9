"""`arena markets pending` and `arena markets resolve`: markets holding cohorts open, and the
operator's override that resolves one by hand (logged, stored on the resolution, then settled)."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.markup import escape

from arena.commands.options import DatabaseOption, fail, open_engine
from arena.commands.terminal import plain_console, plural, print_json
from arena.core.clock import SystemClock
from arena.engine.books.resolving import OverrideError, override, pending_markets
from markets.types import ResolutionKind

console = plain_console()
OUTCOMES = {
    "YES": ResolutionKind.YES,
    "NO": ResolutionKind.NO,
    "VOID": ResolutionKind.VOID,
    "5050": ResolutionKind.FIFTY_FIFTY,
}


def register(markets_app: typer.Typer) -> None:
    """Add ``pending`` and ``resolve`` to the ``arena markets`` group."""
    markets_app.command("pending")(pending_command)
    markets_app.command("resolve")(resolve_command)


def pending_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (keys: docs/cli.md).")] = False,
    database_url: DatabaseOption = None,
) -> None:
    """Markets held by active cohorts that closed without a usable resolution."""
    rows = pending_markets(open_engine(database_url), SystemClock().now())
    if as_json:
        print_json(
            [
                {
                    "market_id": p.market_id,
                    "question": p.question,
                    "close_time": None if p.close_time is None else p.close_time.isoformat(),
                    "cohorts": p.cohorts,
                    "positions": p.positions,
                    "reason": p.reason,
                }
                for p in rows
            ]
        )
        return
    if not rows:
        console.print("No pending markets: every closed market held by an active cohort is resolved.")
        return
    console.print(f"{len(rows)} markets waiting for a resolution")
    for p in rows:  # the id whole on a line of its own (a Polymarket id alone is 77 characters)
        closed = f"{p.close_time:%Y-%m-%d}" if p.close_time else "—"
        console.print(f"[bold]{escape(p.market_id)}[/]", soft_wrap=True)
        console.print(f"  {escape(p.question)}", overflow="fold")
        held = f"{plural(p.cohorts, 'cohort')} · {plural(p.positions, 'position')}"
        console.print(f"  closed {closed} (UTC) · {held} · {escape(p.reason)}")
    console.print(
        "Resolve one by hand with `arena markets resolve MARKET --outcome YES|NO|VOID|5050 --note WHY`."
    )


def resolve_command(
    market_id: Annotated[str, typer.Argument(metavar="MARKET", help="Market id, e.g. polymarket:0x123….")],
    outcome: Annotated[
        str, typer.Option("--outcome", help="YES, NO, VOID (refund the cost basis) or 5050 ($0.50 a share).")
    ],
    note: Annotated[
        str, typer.Option("--note", help="Why (stored with the override).")
    ] = "resolved by the operator",
    database_url: DatabaseOption = None,
) -> None:
    """Resolve a market by hand and settle it in every active cohort that holds it."""
    kind = OUTCOMES.get(outcome.upper())
    if kind is None:
        fail(f"--outcome {outcome!r}: expected one of {', '.join(OUTCOMES)}")
    try:
        settled = override(
            open_engine(database_url), market_id, kind, note=note, now=SystemClock().now(), environ=os.environ
        )
    except OverrideError as exc:
        fail(str(exc))
    console.print(f"{escape(market_id)} resolved {kind.value} by operator override.")
    for cohort_id, positions in settled.items():
        console.print(f"  cohort {cohort_id}: {positions} positions settled")
