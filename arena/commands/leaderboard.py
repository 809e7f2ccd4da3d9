"""`arena leaderboard`: rank agents from the stored log, with bootstrap intervals, as a table or JSON."""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, NoReturn

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from sqlalchemy import Engine

from arena.clock import ensure_utc
from arena.db.engine import make_engine
from arena.reports.catalog import database_state
from arena.reports.notes import stated_notes
from arena.scoring import SORTABLE, FrameError, LoadError, Settings, leaderboard_document, load_frames
from arena.scoring.load import cohort_scoring, model_identities
from arena.scoring.pooling import by_model
from arena.scoring.registry import BY_KEY
from arena.scoring.scores import READINGS, Reading, suffixed
from arena.settings import Settings as ArenaSettings

POOL_BY = ("name", "model")
BASELINE_MARK = "†"
FEW_MARK = "‡"
CONFLICT_MARK = "§"  # the Brier and return labels disagree: see the footnote
# Which comparison with the leader the table shows, by sort metric.
COMPARISON_OF = {
    **{suffixed("brier", r): suffixed("brier", r) for r in READINGS},
    "stated_brier": "log_score",
    "stated_brier_imputed": "stated_brier_imputed",
    "log_score": "log_score",
    "rel_log_score": "log_score",
}


def register(app: typer.Typer) -> None:
    """Add ``arena leaderboard`` to ``app``."""
    app.command("leaderboard")(leaderboard_command)


def leaderboard_command(
    cohort: Annotated[
        list[str] | None,
        typer.Option("--cohort", "-c", help="Cohort id; repeat to pool several. Default: all cohorts."),
    ] = None,
    by: Annotated[str, typer.Option(help=f"Sort metric: {', '.join(SORTABLE)}.")] = "return_pct",
    as_json: Annotated[bool, typer.Option("--json", help="Print every metric and interval as JSON.")] = False,
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
    """Rank the agents of one cohort, or of several pooled (P/L summed, return on capital allocated)."""
    if by not in SORTABLE:
        _fail(f"--by {by!r} is not a metric; choose one of {', '.join(SORTABLE)}")
    if pool_by not in POOL_BY:
        _fail(f"--pool-by {pool_by!r}: choose 'name' or 'model'")
    when = _parse_as_of(as_of)
    engine = _open(database_url)
    try:
        frames = load_frames(engine, cohort, marks_until=when)
        chosen = cohort_scoring(engine, cohort)
        if pool_by == "model":
            frames = by_model(frames, model_identities(engine, cohort))
    except (LoadError, FrameError) as exc:
        _fail(str(exc))
    finally:
        engine.dispose()
    cohorts = sorted(set(frames.agents["cohort_id"]))
    frames = frames if when is None else frames.as_of(when)
    settings = Settings(
        by=by,
        seed=chosen.seed if seed is None else seed,
        replicates=replicates,
        implied=chosen.implied,
        pool_by="model" if pool_by == "model" else "name",
    )
    document = leaderboard_document(frames, settings, cohorts=cohorts, as_of=when)
    if as_json:
        typer.echo(json.dumps(document, indent=2))
    elif not document["agents"]:
        typer.echo("No agents to rank yet: launch a cohort first (see `arena cohort --help`).")
    else:
        Console().print(render(document))


def render(document: dict[str, Any]) -> Table:
    """The rich table of a leaderboard document (the JSON is the complete record).

    Compact so it reads in a 100-column terminal: intervals sit under their estimate, money
    is shown to the dollar (the JSON keeps cents).
    """
    compared = COMPARISON_OF.get(document["sort_by"], "return_pct")
    cohorts = document["cohorts"]
    title = f"Leaderboard — {', '.join(cohorts) if len(cohorts) <= 3 else f'{len(cohorts)} cohorts'}"
    level = round(document["bootstrap"]["confidence"] * 100)
    table = Table(
        title=title,
        caption=escape(_caption(document, level)),
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    implied, other = _readings(document)
    headers = (
        "#",
        "Agent",
        "Value $",
        "P/L $",
        f"Return %\n{level}% CI",
        escape(f"{BY_KEY[suffixed('brier', implied)].display_label(implied)}\n{level}% CI"),
        escape(f"Brier\n[{other}]"),
        "Stated\nimputed",
        "Bets\n(res.)",
    )
    for header in (*headers, "Win\nrate", f"p vs #1\n{_SHORT.get(compared, compared)}", "Labels\nP/L, Brier"):
        table.add_column(header, justify="left" if header in ("Agent", "Labels\nP/L, Brier") else "right")
    for agent in document["agents"]:
        table.add_row(*_cells(agent, compared, implied, other))
    return table


def _readings(document: dict[str, Any]) -> tuple[Reading, Reading]:
    """The headline reading of the bet-implied Brier and the one shown beside it."""
    implied: Reading = document["implied"]
    return implied, next(r for r in READINGS if r != implied)


_SHORT = {"return_pct": "return", "log_score": "log", "stated_brier_imputed": "imputed"}


def _cells(agent: dict[str, Any], compared: str, implied: Reading, other: Reading) -> list[str]:
    marks = (BASELINE_MARK if agent["baseline"] else "") + (FEW_MARK if agent["few_markets"] else "")
    marks += CONFLICT_MARK if agent["label_conflict"] else ""
    brier, brier_other = suffixed("brier", implied), suffixed("brier", other)
    return [
        "—" if agent["rank"] is None else str(agent["rank"]),
        f"{agent['agent']} {marks}".rstrip(),
        _money(agent["value"]),
        _money(agent["pnl"], signed=True),
        _with_interval(
            agent["return_pct"], agent["return_pct_lo"], agent["return_pct_hi"], "{:+.1f}", "{:+.0f}"
        ),
        _with_interval(agent[brier], agent[f"{brier}_lo"], agent[f"{brier}_hi"], "{:.3f}", "{:.2f}"),
        _with_interval(agent[brier_other], None, None, "{:.3f}", ""),
        _with_interval(
            agent["stated_brier_imputed"],
            agent["stated_brier_imputed_lo"],
            agent["stated_brier_imputed_hi"],
            "{:.3f}",
            "{:.2f}",
        ),
        f"{agent['bets']}\n({agent['resolved_bets']})",
        "—" if agent["win_rate"] is None else f"{agent['win_rate']:.0%}",
        _p_value(agent[f"vs_leader_{compared}_p_value"], agent[f"vs_leader_{compared}_few_markets"]),
        "FAILED\n(not ranked)"
        if agent["failed"]
        else "\n".join(
            label or "—" for label in (agent["return_label"], agent[suffixed("brier_label", implied)])
        ),
    ]


def _caption(document: dict[str, Any], level: int) -> str:
    boot = document["bootstrap"]
    return (
        f"{BASELINE_MARK} baseline bot   {FEW_MARK} fewer than {document['min_markets']} resolved markets: "
        f"intervals are wide   {CONFLICT_MARK} Brier and return labels disagree (notes below)\n"
        f"Intervals: {level}% market-clustered bootstrap, "
        f"{boot['replicates']} replicates, seed {boot['seed']}. Brier (bets) read as {document['implied']} "
        f"(see docs/scoring.md). Sorted by {document['sort_by']}."
        + (f" As of {document['as_of']}." if document["as_of"] else "")
        + "".join(f"\n{CONFLICT_MARK} {note}" for note in document["footnotes"])
        + "".join(f"\n{note}" for note in stated_notes(document["agents"]))
    )


def _money(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{'+' if signed and value > 0 else ''}{Decimal(str(value)):,.0f}"


def _with_interval(value: float | None, lo: float | None, hi: float | None, fmt: str, bound: str) -> str:
    if value is None:
        return "—"
    if lo is None or hi is None:
        return fmt.format(value)
    return f"{fmt.format(value)}\n[{bound.format(lo)}, {bound.format(hi)}]"


def _p_value(p: float | None, few: bool | None) -> str:
    if p is None:
        return "—"
    return f"{p:.3f}{' ' + FEW_MARK if few else ''}"


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
    url = database_url or ArenaSettings().db_url
    state = database_state(url)
    if not state.ready:
        _fail(state.problem)
    return make_engine(url)


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(1)
