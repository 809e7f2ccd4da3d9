"""`arena data ...` commands: build, inspect and re-hash replay datasets."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.table import Table

from arena.commands.options import fail, portable_command
from arena.commands.terminal import plain_console
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
        fail(str(exc))
    except OSError as exc:
        fail(str(exc), code=1)


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


@app.command("info")
def info_command(directory: Path = typer.Argument(..., help="A replay dataset directory.")) -> None:
    """Validate a dataset and summarise it: markets, resolutions, dates, gaps."""
    dataset = _or_exit(lambda: load_dataset(directory))
    _print_info(plain_console(), dataset)


@app.command("rehash")
def rehash_command(directory: Path = typer.Argument(..., help="A replay dataset directory.")) -> None:
    """Validate a hand-edited dataset and record the new content hash in dataset.json."""
    dataset = _or_exit(lambda: rehash_dataset(directory))
    plain_console().print(f"{directory}: valid; content_hash {dataset.content_hash}")


def _print_info(console: Console, dataset: ReplayDataset) -> None:
    summary = summarize(dataset)
    info = dataset.info
    about = Table("field", "value", title=f"Dataset {dataset.path}")
    for field, value in [
        ("name", info.name),
        ("version", info.version),
        ("description", info.description),
        ("source", info.source),
        ("license", info.license),
        ("created with", info.created_with),
        ("content_hash", dataset.content_hash),
    ]:
        about.add_row(field, value)
    console.print(about)
    console.print(_venue_table(summary))
    console.print(_coverage_table(summary))
    if summary.top_categories:
        categories = Table("category", "markets", title="Top categories")
        for category, count in summary.top_categories:
            categories.add_row(category, str(count))
        console.print(categories)
    else:
        console.print("categories: none recorded")


def _venue_table(summary: DatasetSummary) -> Table:
    kinds = [k for k in _KINDS if k in _ALWAYS_SHOWN or any(v.outcomes.get(k) for v in summary.venues)]
    table = Table("venue", "markets", *kinds, title="Markets by venue and resolution")
    for venue in summary.venues:
        table.add_row(venue.venue, str(venue.markets), *(str(venue.outcomes.get(k, 0)) for k in kinds))
    totals = [str(sum(v.outcomes.get(k, 0) for v in summary.venues)) for k in kinds]
    table.add_row("[bold]total[/bold]", str(sum(v.markets for v in summary.venues)), *totals)
    return table


def _coverage_table(summary: DatasetSummary) -> Table:
    table = Table("figure", "value", title="Prices and timing")
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
