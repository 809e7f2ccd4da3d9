"""`arena data ...` commands: build, inspect and re-hash replay datasets; import external forecasts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena.commands.options import BAD_INPUT, FAILED, DatabaseOption, fail, open_engine, portable_command
from arena.commands.terminal import echo, listing_table, plain_console, print_json, print_table
from markets.placement import PlacementRefused
from markets.replay import (
    DatasetError,
    ReplayDataset,
    import_forecastbench,
    load_dataset,
    rehash_dataset,
    summarize,
)
from markets.replay.summary import UNRESOLVED, DatasetSummary, day_of

app = typer.Typer(no_args_is_help=True, help="data commands")

T = TypeVar("T")
_KINDS = ("YES", "NO", "VOID", "5050", "OUTCOME", UNRESOLVED)
_ALWAYS_SHOWN = ("YES", "NO", "VOID")  # a zero here is information (e.g. "no voided markets")


def _or_exit(action: Callable[[], T]) -> T:
    """Run ``action``; a dataset problem or an output path the arena will not replace becomes its
    one-line message and exit status 2 (bad input), a file that cannot be read or written
    (permissions, a full disk) exit status 1."""
    try:
        return action()
    except (DatasetError, PlacementRefused) as exc:
        fail(str(exc), BAD_INPUT)
    except OSError as exc:
        fail(str(exc), FAILED)


@app.command("import-forecastbench")
def import_forecastbench_command(
    raw_dir: Path = typer.Argument(
        ..., help="Raw ForecastBench folder: markets.jsonl, daily_values.csv, SOURCE.md, orig/."
    ),
    out: Path = typer.Option(..., "--out", help="Dataset directory to create."),
    min_points: int = typer.Option(
        10, "--min-points", min=1, help="Keep markets with at least this many daily values."
    ),
    name: str = typer.Option(
        "forecastbench", "--name", help="Dataset name (prices are stamped replay:NAME)."
    ),
    version: str | None = typer.Option(None, "--version", help="Dataset version [default: last price date]."),
    force: bool = typer.Option(False, "--force", help="Replace an existing dataset at --out."),
) -> None:
    """Convert the raw ForecastBench layout into a replay dataset (written atomically)."""
    args = ["arena", "data", "import-forecastbench", str(raw_dir), "--out", str(out)]
    args += ["--min-points", str(min_points), "--name", name, *(["--version", version] if version else [])]
    command = portable_command(args)
    summary = _or_exit(
        lambda: import_forecastbench(
            raw_dir,
            out,
            created_with=command,
            min_points=min_points,
            name=name,
            version=version,
            overwrite=force,
        )
    )
    console = plain_console()
    console.print(f"Kept {len(summary.dataset.markets)} of {summary.considered} markets; wrote {out}")
    for reason, count in sorted(summary.skipped.items()):
        console.print(f"  left out, {reason}: {count}")
    _print_info(console, summary.dataset)


@app.command("import-forecast-set")
def import_forecast_set_command(
    questions: Annotated[Path, typer.Option("--questions", help="ForecastBench question set (JSON).")],
    forecasts: Annotated[
        list[Path], typer.Option("--forecasts", help="A forecast set (JSON); repeat for several.")
    ],
    resolutions: Annotated[Path, typer.Option("--resolutions", help="ForecastBench resolution set (JSON).")],
    name: Annotated[
        str | None, typer.Option("--name", help="Cohort name [default: the question set's].")
    ] = None,
    resolution_date: Annotated[
        str | None,
        typer.Option(
            "--resolution-date",
            help="Night the resolution set was made, YYYY-MM-DD [default: the date in its file name].",
        ),
    ] = None,
    database_url: DatabaseOption = None,
) -> None:
    """Create a cohort of external forecasters from a ForecastBench forecast set; prints its id.

    The market questions only (dataset questions are out of scope), scored by the arena's stated
    rules: resolved markets against their outcome, unresolved ones provisionally against their
    latest value. What was left out, and why, goes to stderr.
    """
    from arena.cohorts.forecast_set_import import import_forecast_set
    from arena.cohorts.forecast_sets import ForecastSetError, read_forecast_set
    from arena.core.clock import SystemClock

    night = _day(resolution_date)
    try:
        forecast_set = read_forecast_set(questions, forecasts, resolutions, night)
        imported = import_forecast_set(
            open_engine(database_url),
            forecast_set,
            name=name or forecast_set.question_set.removesuffix(".json"),
            clock=SystemClock(),
        )
    except ForecastSetError as exc:
        fail(str(exc))
    echo(
        f"Imported {imported.markets} market questions ({imported.resolved} resolved) and "
        f"{imported.forecasts} forecasts by {imported.forecasters} external forecasters, with the "
        "half baseline (Always 0.5), as cohort:",
        err=True,
    )
    for reason, count in forecast_set.left_out.items():
        if count:
            echo(f"  left out, {reason}: {count}", err=True)
    echo(imported.cohort_id)


@app.command("import-forecasts")
def import_forecasts_command(
    path: Annotated[Path, typer.Argument(metavar="FILE.csv|FILE.jsonl", help="One forecast per row.")],
    cohort: Annotated[str, typer.Option("--cohort", help="The cohort whose markets were forecast.")],
    source: Annotated[
        str | None, typer.Option("--source", help="Where the forecasts came from [default: the file name].")
    ] = None,
    database_url: DatabaseOption = None,
) -> None:
    """Seat external forecasters in a cohort from a file of forecasts (forecaster, market_id, time,
    probability, outcome optional), scored beside the cohort's agents."""
    from arena.cohorts.forecast_file import ForecastFileError, import_forecasts, read_forecast_file
    from arena.core.clock import SystemClock

    try:
        rows = read_forecast_file(path)
    except ForecastFileError as exc:
        fail(str(exc))
    try:
        imported = import_forecasts(
            open_engine(database_url), cohort, rows, source=source or path.name, clock=SystemClock()
        )
    except ForecastFileError as exc:
        fail(f"{path}: {exc}")
    echo(
        f"Imported {imported.forecasts} forecasts by {imported.forecasters} forecasters into cohort "
        f"{cohort} ({imported.seated} seated as new external agents)"
    )


def _day(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        fail(f"--resolution-date {text!r}: expected YYYY-MM-DD")


@app.command("info")
def info_command(
    directory: Path = typer.Argument(..., help="A replay dataset directory."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (keys: docs/cli.md)."),
) -> None:
    """Validate a dataset and summarise it: markets, resolutions, dates, gaps."""
    dataset = _or_exit(lambda: load_dataset(directory))
    if as_json:
        print_json(_info_json(dataset))
    else:
        _print_info(plain_console(), dataset)


@app.command("rehash")
def rehash_command(directory: Path = typer.Argument(..., help="A replay dataset directory.")) -> None:
    """Validate a hand-edited dataset and record the new content hash in dataset.json."""
    dataset = _or_exit(lambda: rehash_dataset(directory))
    plain_console().print(f"{directory}: valid; content_hash {dataset.content_hash}")


def _info_json(dataset: ReplayDataset) -> dict[str, Any]:
    summary, info = summarize(dataset), dataset.info
    return {
        "path": str(dataset.path),
        "name": info.name,
        "version": info.version,
        "description": info.description,
        "source": info.source,
        "license": info.license,
        "created_with": info.created_with,
        "content_hash": dataset.content_hash,
        "venues": [
            {"venue": v.venue, "markets": v.markets, "outcomes": dict(v.outcomes)} for v in summary.venues
        ],
        "first_price": _iso(summary.first_price),
        "last_price": _iso(summary.last_price),
        "daily_prices": summary.daily,
        "first_resolution": _iso(summary.first_resolution),
        "last_resolution": _iso(summary.last_resolution),
        "price_rows": summary.price_rows,
        "price_points": summary.price_points,
        "median_points": summary.median_points,
        "markets_without_prices": summary.markets_without_prices,
        "gaps_over_7_days": summary.gaps_over_threshold,
        "longest_gap_days": summary.longest_gap.total_seconds() / 86_400,
        "longest_gap_market": summary.longest_gap_market,
        "categories": [{"category": c, "markets": n} for c, n in summary.top_categories],
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _print_info(console: Console, dataset: ReplayDataset) -> None:
    """The dataset's facts; its content hash on a line of its own, whole (it is what a report cites)."""
    summary = summarize(dataset)
    info = dataset.info
    console.print(f"Dataset {escape(str(dataset.path))}")
    console.print(f"content_hash\n  {dataset.content_hash}", soft_wrap=True)
    about = listing_table()
    about.add_column("field", no_wrap=True)
    about.add_column("value")
    for field, value in [
        ("name", info.name),
        ("version", info.version),
        ("description", info.description),
        ("source", info.source),
        ("license", info.license),
        ("created with", info.created_with),
    ]:
        about.add_row(field, escape(value))
    print_table(console, about)
    print_table(console, _venue_table(summary))
    print_table(console, _coverage_table(summary))
    if summary.top_categories:
        categories = listing_table("Top categories")
        categories.add_column("category")
        categories.add_column("markets", justify="right", no_wrap=True)
        for category, count in summary.top_categories:
            categories.add_row(escape(category), str(count))
        print_table(console, categories)
    else:
        console.print("categories: none recorded")


def _venue_table(summary: DatasetSummary) -> Table:
    kinds = [k for k in _KINDS if k in _ALWAYS_SHOWN or any(v.outcomes.get(k) for v in summary.venues)]
    table = listing_table("Markets by venue and resolution")
    for header in ("venue", "markets", *kinds):
        table.add_column(header, no_wrap=True, justify="left" if header == "venue" else "right")
    for venue in summary.venues:
        table.add_row(venue.venue, str(venue.markets), *(str(venue.outcomes.get(k, 0)) for k in kinds))
    totals = [str(sum(v.outcomes.get(k, 0) for v in summary.venues)) for k in kinds]
    table.add_row("[bold]total[/bold]", str(sum(v.markets for v in summary.venues)), *totals)
    return table


def _coverage_table(summary: DatasetSummary) -> Table:
    table = listing_table("Prices and timing")
    table.add_column("figure")
    table.add_column("value")
    if summary.first_price and summary.last_price:
        if summary.daily:
            span = f"{day_of(summary.first_price)} … {day_of(summary.last_price)}"
            table.add_row("price dates (daily close, used the next day)", span)
        else:
            table.add_row("price observed_at", f"{_when(summary.first_price)} … {_when(summary.last_price)}")
    if summary.first_resolution and summary.last_resolution:
        table.add_row("resolved_at", f"{_when(summary.first_resolution)} … {_when(summary.last_resolution)}")
    table.add_row("price rows", f"{summary.price_rows:,}")
    table.add_row("price points (market, time)", f"{summary.price_points:,}")
    table.add_row("median points per market", f"{summary.median_points:g}")
    table.add_row("markets without prices", str(summary.markets_without_prices))
    table.add_row("gaps > 7 days", str(summary.gaps_over_threshold))
    longest = _duration(summary.longest_gap)
    if summary.longest_gap_market:
        longest += f" ({summary.longest_gap_market})"
    table.add_row("longest gap", longest)
    return table


def _when(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(span: timedelta) -> str:
    hours = span.total_seconds() / 3600
    return f"{span.days} days" if hours >= 48 else f"{hours:g} hours"
