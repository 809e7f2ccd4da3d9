"""`arena leaderboard`: rank agents from the stored log, with bootstrap intervals, as a table or JSON."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, NoReturn

import typer
from sqlalchemy import Engine

from arena.commands.leaderboard_table import EachReplicateOption, WideOption, print_leaderboard
from arena.commands.options import database_url_or_default, fail
from arena.commands.terminal import echo, plain_console
from arena.core.clock import ensure_utc
from arena.db.engine import make_engine
from arena.reports.state import database_state
from arena.scoring import SORTABLE, FrameError, LoadError, Settings, leaderboard_document, load_frames
from arena.scoring.load.cohort_choice import choose_cohorts
from arena.scoring.load.database import cohort_scoring, model_identities
from arena.scoring.stats.pooling import by_model

POOL_BY = ("name", "model")


def register(app: typer.Typer) -> None:
    """Add ``arena leaderboard`` to ``app``."""
    app.command("leaderboard")(leaderboard_command)


def leaderboard_command(
    cohort: Annotated[
        list[str] | None,
        typer.Option(
            "--cohort", "-c", help="Cohort id; repeat to pool several. Default: the latest cohort alone."
        ),
    ] = None,
    pool_all: Annotated[
        bool,
        typer.Option(
            "--all", help="Pool every cohort that ran (never-started and cancelled ones are left out, named)."
        ),
    ] = False,
    by: Annotated[str, typer.Option(help=f"Sort metric: {', '.join(SORTABLE)}.")] = "return_pct",
    as_json: Annotated[bool, typer.Option("--json", help="Print every metric and interval as JSON.")] = False,
    wide: WideOption = False,
    each_replicate: EachReplicateOption = False,
    database_url: Annotated[
        str | None, typer.Option(help="Database URL (default: ARENA_DATABASE_URL or the local SQLite file).")
    ] = None,
    pool_by: Annotated[
        str,
        typer.Option(
            "--pool-by",
            help="Across cohorts: one row per agent 'name', or per 'model' (kind, endpoint, model, prompt).",
        ),
    ] = "name",
    seed: Annotated[
        int | None, typer.Option(help="Seed of the bootstrap (default: the cohort's seed).")
    ] = None,
    replicates: Annotated[int, typer.Option(min=1, help="Bootstrap replicates.")] = 2_000,
    as_of: Annotated[
        str | None,
        typer.Option(help="Score what was known at this UTC time, e.g. 2025-03-01T00:00:00+00:00."),
    ] = None,
) -> None:
    """Rank the agents of the latest cohort, of those named, or of every cohort pooled with --all
    (P/L summed, return on capital allocated)."""
    if by not in SORTABLE:
        _fail(f"--by {by!r} is not a metric; choose one of {', '.join(SORTABLE)}")
    if pool_by not in POOL_BY:
        _fail(f"--pool-by {pool_by!r}: choose 'name' or 'model'")
    if cohort and pool_all:
        _fail("--all pools every cohort and --cohort names some: give one or the other")
    when = _parse_as_of(as_of)
    engine = _open(database_url)
    try:
        choice = choose_cohorts(engine, cohort, pool_all=pool_all)
        ids = list(choice.ids)
        frames = load_frames(engine, ids, marks_until=when)
        chosen = cohort_scoring(engine, ids)
        if pool_by == "model":
            frames = by_model(frames, model_identities(engine, ids))
    except (LoadError, FrameError) as exc:
        _fail(str(exc))
    finally:
        engine.dispose()
    for cohort_id, reason in choice.unscored:  # left out, never silently
        echo(f"note: cohort {cohort_id} is not scored: {reason}", err=True)
    cohorts = sorted(choice.ids)
    frames = frames if when is None else frames.as_of(when)
    settings = Settings(
        by=by,
        seed=chosen.seed if seed is None else seed,
        replicates=replicates,
        implied=chosen.implied,
        pool_by="model" if pool_by == "model" else "name",
    )
    document = leaderboard_document(frames, settings, cohorts=cohorts, as_of=when, choice=choice)
    if as_json:
        echo(json.dumps(document, indent=2))
    elif not document["agents"]:
        echo("No agents to rank yet: launch a cohort first (see `arena cohort --help`).")
    else:
        print_leaderboard(plain_console(), document, wide=wide, each_replicate=each_replicate)


def _parse_as_of(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        return ensure_utc(datetime.fromisoformat(text))
    except ValueError as exc:
        _fail(
            f"--as-of {text!r}: expected an ISO 8601 time with a zone, e.g. 2025-03-01T00:00:00+00:00 ({exc})"
        )


def _open(database_url: str | None) -> Engine:
    """An engine on an existing arena database (never creates one), or a one-line error."""
    url = database_url_or_default(database_url)
    state = database_state(url)
    if not state.ready:
        _fail(state.problem)
    return make_engine(url)


def _fail(message: str) -> NoReturn:
    """Every failure here is bad input (an option, an id, a missing database): exit 2."""
    fail(message)
