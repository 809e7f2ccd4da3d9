"""`arena markets pending` and `arena markets resolve`: markets without a final resolution that
cohorts hold or stated on, and the operator's override that resolves one by hand (logged,
stored on the resolution, then settled)."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.markup import escape

from arena.commands.options import DatabaseOption, fail, open_engine, open_reader
from arena.commands.terminal import plain_console, plural, print_json
from arena.core.clock import SystemClock
from arena.engine.books.pending import pending_markets
from arena.engine.books.resolving import OverrideError, override
from arena.sync.outcomes import describe

console = plain_console()


def register(markets_app: typer.Typer) -> None:
    """Add ``pending`` and ``resolve`` to the ``arena markets`` group."""
    markets_app.command("pending")(pending_command)
    markets_app.command("resolve")(resolve_command)


def pending_command(
    stopped: bool = typer.Option(
        False, "--stopped", help="Only markets the venue no longer trades (closed, disputed, past close)."
    ),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (keys: docs/cli.md).")] = False,
    database_url: DatabaseOption = None,
) -> None:
    """Markets any cohort holds or stated a forecast on that have no final resolution."""
    rows = pending_markets(open_reader(database_url), SystemClock().now())
    trading = sum(p.trading for p in rows)
    shown = [p for p in rows if not (stopped and p.trading)]
    if as_json:
        print_json(
            [
                {
                    "market_id": p.market_id,
                    "question": p.question,
                    "close_time": None if p.close_time is None else p.close_time.isoformat(),
                    "venue_status": p.venue_status,
                    "trading": p.trading,
                    "cohorts": p.cohorts,
                    "positions": p.positions,
                    "reason": p.reason,
                }
                for p in shown
            ]
        )
        return
    if not shown:
        console.print("No pending markets: every market a cohort holds or stated on has a final resolution.")
        if rows:
            console.print(f"({trading} markets held or stated on are still trading.)")
        return
    console.print(f"{len(shown)} markets without a final resolution")
    for p in shown:  # the id whole on a line of its own (a Polymarket id alone is 77 characters)
        closes = f"{p.close_time:%Y-%m-%d}" if p.close_time else "—"
        console.print(f"[bold]{escape(p.market_id)}[/]", soft_wrap=True)
        console.print(f"  {escape(p.question)}", overflow="fold")
        held = f"{plural(p.cohorts, 'cohort')} · {plural(p.positions, 'position')}"
        console.print(f"  closes {closes} (UTC) · {escape(p.venue_status or 'not synced')} · {held}")
        console.print(f"  {escape(p.reason)}", overflow="fold")
    console.print(f"{len(rows) - trading} stopped trading, {trading} still trading.")
    console.print("Resolve one by hand with `arena markets resolve MARKET --outcome OUTCOME --note WHY`.")


def resolve_command(
    market_id: Annotated[str, typer.Argument(metavar="MARKET", help="Market id, e.g. polymarket:0x123….")],
    outcome: Annotated[
        str,
        typer.Option(
            "--outcome",
            help="YES, NO, VOID (refund the cost basis), 5050 ($0.50 a share, YES/NO markets), "
            "or the name of any outcome of a multi-outcome market.",
        ),
    ],
    note: Annotated[
        str, typer.Option("--note", help="Why (stored with the override).")
    ] = "resolved by the operator",
    database_url: DatabaseOption = None,
) -> None:
    """Resolve a market by hand and settle it in every active cohort that holds it."""
    try:
        resolution, settled = override(
            open_engine(database_url),
            market_id,
            outcome,
            note=note,
            now=SystemClock().now(),
            environ=os.environ,
        )
    except OverrideError as exc:
        fail(str(exc))
    console.print(f"{escape(market_id)} resolved {escape(describe(resolution))} by operator override.")
    for cohort_id, positions in settled.items():
        console.print(f"  cohort {cohort_id}: {positions} positions settled")
