"""`arena compare ID1 ID2 …`: the agents of cohorts run on the same markets, side by side, with
paired market-clustered intervals on their differences and a verdict on each (as a table or JSON)."""

from __future__ import annotations

import textwrap
from typing import Annotated

import typer
from rich.markup import escape

from arena.commands.options import DatabaseOption, fail, open_reader
from arena.commands.terminal import listing_table, plain_console, print_json, print_table
from arena.reports.cohort_comparison import (
    CohortComparison,
    ComparisonError,
    comparison_document,
    display_table,
    load_comparison,
)
from arena.scoring import FrameError, LoadError
from arena.scoring.board.ranking import MIN_MARKETS

POOL_BY = ("name", "model")


def register(app: typer.Typer) -> None:
    """Add ``arena compare`` to ``app``."""
    app.command("compare")(compare_command)


def compare_command(
    cohorts: Annotated[
        list[str], typer.Argument(help="Two or more cohort ids; the first is the reference (A).")
    ],
    pool_by: Annotated[
        str,
        typer.Option(
            "--pool-by",
            help="Match agents across cohorts by 'name', or by 'model' (kind, endpoint, model, prompt).",
        ),
    ] = "name",
    as_json: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON.")] = False,
    seed: Annotated[
        int | None, typer.Option(help="Seed of the bootstrap (default: the first cohort's seed).")
    ] = None,
    replicates: Annotated[int, typer.Option(min=1, help="Bootstrap replicates.")] = 2_000,
    min_markets: Annotated[
        int, typer.Option(help="Fewest common resolved markets a verdict may rest on (at least 2).")
    ] = MIN_MARKETS,
    database_url: DatabaseOption = None,
) -> None:
    """Compare cohorts run on the same markets: each agent of every cohort against the same agent
    of the first, with paired intervals over their common markets and a verdict."""
    if pool_by not in POOL_BY:
        fail(f"--pool-by {pool_by!r}: choose 'name' or 'model'")
    engine = open_reader(database_url)
    try:
        comparison = load_comparison(
            engine,
            cohorts,
            pool_by="model" if pool_by == "model" else "name",
            seed=seed,
            replicates=replicates,
            min_markets=min_markets,
        )
    except (LoadError, FrameError, ComparisonError) as exc:
        fail(str(exc))
    finally:
        engine.dispose()
    if as_json:
        print_json(comparison_document(comparison))
    else:
        print_comparison(comparison)


def print_comparison(comparison: CohortComparison) -> None:
    """The cohorts and their letters, then per agent and cohort a table of the metrics (A's value,
    the cohort's, the difference with its interval, common markets) and one verdict a line."""
    console = plain_console()
    console.print("Cohorts (differences are each cohort − A, over the markets both took part in):")
    for letter, cohort in zip(comparison.letters, comparison.cohorts, strict=True):
        console.print(f"  {letter}  {escape(cohort)}", soft_wrap=True)
    console.print(
        f"{len(comparison.common_markets)} markets bet or stated on in every cohort (--json lists them). "
        f"{comparison.level:.0%} intervals: paired, resampling markets; a verdict needs "
        f"{comparison.min_markets} common resolved markets."
    )
    for cohort, unmatched in comparison.unmatched.items():
        if unmatched:
            console.print(f"Not compared (no namesake): {escape(', '.join(unmatched))} of {escape(cohort)}")
    table = display_table(comparison)
    for (agent, letter), rows in table.group_by(["agent", "cohort"], maintain_order=True):
        console.print()
        grid = listing_table(f"{escape(str(agent))}: {letter} vs A")
        grid.add_column("Metric")
        grid.add_column("A", justify="right", no_wrap=True)
        grid.add_column(str(letter), justify="right", no_wrap=True)
        grid.add_column(f"{letter} − A", justify="right", no_wrap=True)
        grid.add_column(f"{comparison.level:.0%} interval", justify="right", no_wrap=True)
        grid.add_column("Markets", justify="right", no_wrap=True)
        for r in rows.iter_rows(named=True):
            grid.add_row(
                escape(r["metric"]),
                r["reference"],
                r["value"],
                r["difference"],
                r["interval"],
                str(r["markets"]),
            )
        print_table(console, grid)
        for reading in rows["reading"]:  # one verdict a line, folded under its own indent
            folded = textwrap.fill(reading, console.width, initial_indent="  ", subsequent_indent="    ")
            console.print(escape(folded), soft_wrap=True)
