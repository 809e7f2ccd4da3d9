"""`arena markets ...` commands: ``sync`` (live venues into the database) and ``record`` (export).

``pending`` and ``resolve`` are added to this group by ``arena.commands.resolutions``.
"""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

import anyio
import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from arena.commands import resolutions
from arena.commands.options import (
    FAILED,
    DatabaseOption,
    fail,
    open_engine,
    open_reader,
    portable_command,
    process_settings,
)
from arena.commands.terminal import log_to_terminal, plain_console
from arena.core.clock import SystemClock
from arena.db.engine import session_scope
from arena.db.market_rows import recorded_data
from arena.db.market_source import ACCOUNTING_SOURCES, HISTORY_SOURCES
from arena.sync.run import SyncDeadlineExceeded
from arena.sync.types import SyncReport, SyncSettings
from arena.sync.venues import VenueUrls, sync_venue
from markets.placement import PlacementRefused
from markets.replay.format import DatasetError, DatasetInfo
from markets.replay.write import write_dataset
from markets.types import Venue

app = typer.Typer(no_args_is_help=True, help="markets commands")


class Discovery(StrEnum):
    MARKETS = "markets"  # /markets/keyset ordered by market volume
    EVENTS = "events"  # /events/keyset ordered by event volume, markets flattened


console = plain_console()


@app.command("sync")
def sync_command(
    venue: Venue = typer.Option(Venue.POLYMARKET, "--venue", help="Which venue to sync."),
    top_n: int = typer.Option(500, "--top-n", min=1, help="Keep the N open markets with the most volume."),
    min_liquidity: Decimal | None = typer.Option(
        None, "--min-liquidity", help="Venue units [default: 1000 USDC on Polymarket, 100 mana on Manifold]."
    ),
    max_days_to_close: float = typer.Option(
        180, "--max-days-to-close", help="Skip markets closing later (0: no limit)."
    ),
    min_price: Decimal = typer.Option(
        Decimal("0.02"), "--min-price", help="Skip markets already decided below this."
    ),
    max_price: Decimal = typer.Option(
        Decimal("0.98"), "--max-price", help="Skip markets already decided above this."
    ),
    books: bool = typer.Option(
        True, "--books/--no-books", help="Read order books for best bid/ask (Polymarket)."
    ),
    history_days: int = typer.Option(
        7, "--history-days", min=0, help="Price history backfilled for new markets."
    ),
    discovery: Discovery = typer.Option(
        Discovery.MARKETS, "--discovery", help="Polymarket listing endpoint."
    ),
    gamma_url: str | None = typer.Option(
        None, "--gamma-url", help="Gamma base URL [default: ARENA_GAMMA_URL or public]."
    ),
    clob_url: str | None = typer.Option(
        None, "--clob-url", help="CLOB base URL [default: ARENA_CLOB_URL or public]."
    ),
    manifold_url: str | None = typer.Option(
        None, "--manifold-url", help="Manifold base URL [default: ARENA_MANIFOLD_URL or public]."
    ),
    database_url: DatabaseOption = None,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log every retry and pending resolution."),
) -> None:
    """Upsert the top open markets of a venue, record prices with provenance, detect resolutions."""
    log_to_terminal(logging.DEBUG if verbose else logging.WARNING, "%(levelname)s %(name)s: %(message)s")
    env = process_settings()  # a bad ARENA_* value is one line, not a traceback
    settings = SyncSettings(
        top_n=top_n,
        min_liquidity=min_liquidity,
        max_days_to_close=max_days_to_close or None,
        min_price=min_price,
        max_price=max_price,
        fetch_books=books,
        history_days=history_days,
        discovery=Discovery(discovery).value,
    ).limited_by(env)
    engine = open_engine(database_url)
    urls = VenueUrls(
        gamma=gamma_url or env.gamma_url,
        clob=clob_url or env.clob_url,
        manifold=manifold_url or env.manifold_url,
    )
    with _RichProgress() as progress:

        async def main() -> SyncReport | SyncDeadlineExceeded:
            try:
                return await sync_venue(engine, SystemClock(), venue, settings, urls=urls, progress=progress)
            except SyncDeadlineExceeded as exc:
                return exc

        report = anyio.run(main)
    if isinstance(report, SyncDeadlineExceeded):
        fail(str(report), code=1)
    _print_report(report)
    if report.problems and report.selected + report.refreshed == 0:
        subject, reason = report.problems[0]
        fail(f"sync of {venue.value} kept nothing: {subject}: {reason}", code=FAILED)


@app.command("record")
def record_command(
    out: Path = typer.Option(..., "--out", help="Dataset directory to create."),
    venue: list[Venue] = typer.Option(
        [Venue.POLYMARKET, Venue.MANIFOLD], "--venue", help="Venue(s) to export [default: both]."
    ),
    name: str = typer.Option("live-record", "--name", help="Dataset name."),
    force: bool = typer.Option(False, "--force", help="Replace an existing dataset at --out."),
    database_url: DatabaseOption = None,
) -> None:
    """Export what sync stored (markets, accounting prices, resolutions) as a replay dataset."""
    engine = open_reader(database_url)
    now = SystemClock().now()
    with session_scope(engine, write=False) as session:
        markets, prices, resolutions = recorded_data(
            session, venue, [ACCOUNTING_SOURCES[v] for v in venue], [HISTORY_SOURCES[v] for v in venue]
        )
    if not markets:
        fail("nothing to record: no stored market has a price (run `arena markets sync` first)", FAILED)
    recorded = [v for v in venue if any(m.venue is v for m in markets)]  # name only venues present
    info = DatasetInfo(
        name=name,
        version=now.strftime("%Y-%m-%dT%H%MZ"),
        source="Recorded by `arena markets sync` from "
        + ", ".join(v.value for v in recorded)
        + " public APIs (prices: "
        + ", ".join(ACCOUNTING_SOURCES[v] for v in recorded)
        + ")",
        license="each venue's API terms (Manifold: no commercial AI training without a data license)",
        created_with=portable_command(["arena", *sys.argv[1:]]),
    )
    try:
        dataset = write_dataset(
            out, markets=markets, prices=prices, resolutions=resolutions, info=info, overwrite=force
        )
    except PlacementRefused as exc:
        fail(str(exc))
    except (DatasetError, OSError) as exc:
        fail(str(exc), code=FAILED)
    console.print(
        f"Recorded {len(dataset.markets)} markets, {len(prices)} price snapshots and "
        f"{len(resolutions)} resolutions to {out}"
    )


class _RichProgress:
    """The sync's ``Progress`` hook as a rich progress bar (one task per stage)."""

    def __init__(self) -> None:
        self._bar = Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._task: TaskID | None = None

    def __enter__(self) -> _RichProgress:
        self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.__exit__(None, None, None)

    def stage(self, name: str, total: int | None) -> None:
        """Start a stage; the previous one ends at what it did (the listing stops once N are kept,
        short of its total when fewer pass the filters), so the bar never claims work not done."""
        if self._task is not None:
            done = self._bar.tasks[-1].completed
            self._bar.update(self._task, total=done, completed=done)
        self._task = self._bar.add_task(name, total=total)

    def advance(self, amount: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, amount)


def _print_report(report: SyncReport) -> None:
    title = f"Sync {report.venue.value} at {report.observed_at:%Y-%m-%d %H:%M:%S} UTC"
    table = Table(title=title, min_width=len(title))
    table.add_column("")
    table.add_column("count", justify="right")
    rows = [
        ("open markets listed", report.listed),
        ("kept (top N after filters)", report.selected),
        ("not tradable here (skipped)", report.unsupported),
        ("stored markets refreshed", report.refreshed),
        ("unchanged since the last sync (skipped)", report.unchanged),
        ("market rows written", report.markets_written),
        ("price snapshots written", report.snapshots_written),
        ("history points written", report.history_written),
        ("resolutions written", report.resolutions_written),
        ("awaiting resolution", len(report.undecided)),
        ("overrides contradicted by the venue", len(report.contradictions)),
        ("gone from the venue", len(report.gone)),
        ("problems", len(report.problems)),
    ]
    for label, count in rows:
        table.add_row(label, str(count))
    console.print(table)
    console.print(f"took {timedelta(seconds=round(report.seconds))}")
    for line in report.contradictions:
        console.print(f"[yellow]contradiction[/] {escape(line)}", highlight=False)
    for subject, reason in report.problems[:20]:
        console.print(f"[yellow]problem[/] {subject}: {reason}", highlight=False)
    if len(report.problems) > 20:
        console.print(f"… and {len(report.problems) - 20} more (run with -v to log them all)")


resolutions.register(app)
