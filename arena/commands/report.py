"""``arena report COHORT --out DIR``: export a cohort's report folder (HTML, Markdown, tables) and zip."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from arena.commands.options import FAILED, fail
from arena.commands.terminal import echo
from arena.core.clock import SystemClock
from arena.core.settings import Settings
from arena.db.engine import make_engine, redact_url
from arena.reports.state import database_state


def register(app: typer.Typer) -> None:
    """Add ``arena report`` to ``app``."""
    app.command("report")(report_command)


def report_command(
    cohort: Annotated[str, typer.Argument(help="Cohort id (see `arena cohort list`).")],
    out: Annotated[Path, typer.Option("--out", help="Folder to create for the report.")],
    prompts: Annotated[
        bool, typer.Option("--prompts/--no-prompts", help="Include raw prompts and model responses.")
    ] = True,
    make_zip: Annotated[
        bool, typer.Option("--zip/--no-zip", help="Also write DIR.zip next to the folder.")
    ] = True,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace the previous report (and zip) at DIR; never another folder."),
    ] = False,
    database_url: Annotated[
        str | None, typer.Option(help="Database URL (default: ARENA_DATABASE_URL or the local SQLite file).")
    ] = None,
) -> None:
    """Write report.html (opens offline), report.md, tables/ (Parquet + CSV) and manifest.json."""
    # Imported here: building a report loads plotly and the figures, which `arena --help` and
    # every other command must not pay for at start-up.
    from arena.reports.bundle import build_report
    from arena.reports.content import ReportError
    from markets.placement import PlacementRefused

    url = database_url or Settings().db_url
    state = database_state(url)
    if not state.ready:
        fail(state.problem)
    engine = make_engine(url)
    try:
        report = build_report(
            engine,
            cohort,
            out,
            clock=SystemClock(),
            environ=os.environ,
            prompts=prompts,
            make_zip=make_zip,
            replace=force,
        )
    except (PlacementRefused, ReportError) as exc:  # a folder in the way, an unknown cohort
        fail(str(exc))
    except OSError as exc:  # a full disk, a folder that cannot be written: nothing was placed
        fail(f"writing the report to {out}: {exc}", code=FAILED)
    finally:
        engine.dispose()
    echo(f"Report of cohort {cohort} from {redact_url(url)} written to {report.folder}")
    if report.zip:
        echo(f"  zip: {report.zip}")
    echo("  rows: " + ", ".join(f"{name} {rows:,}" for name, rows in sorted(report.rows.items())))
