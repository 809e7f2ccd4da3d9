"""The printed leaderboard (``arena leaderboard``, ``arena demo``, ``arena replay``): two layouts.

The default layout fits an 80-column terminal or a pipe, where rich would otherwise cut names
and headers to "favor…": every agent name in full (long names fold onto a second line, never
cut) and the headline verdicts only (docs/reading-the-leaderboard.md says why these): rank,
return with its interval, the headline Brier (bets) with its interval, the stated Brier imputed,
the tournament take and a status word; marks after a name flag what a figure cannot be trusted
for. ``--wide`` prints every column at its natural width, however wide the terminal, for a pager
or a file (``less -S``). The JSON is the complete record.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from arena.cohorts.seats import REPLICATE_MARK
from arena.commands.terminal import plain_console
from arena.reports.notes import adjusted_notes, stated_notes
from arena.scoring.board.notes import CONFLICT_MARK, LEGEND, flags_of, marked_notes
from arena.scoring.load.cohort_choice import cohort_line
from arena.scoring.load.frames import READING_RULES, READINGS, Reading, suffixed
from arena.scoring.metrics.registry import BY_KEY

BASELINE_MARK = "†"
FEW_MARK = "‡"
EXTERNAL_MARK = "*"  # an external forecaster: imported forecasts, no bets
# Which comparison with the leader the wide table shows, by sort metric.
COMPARISON_OF = {
    **{suffixed("brier", r): suffixed("brier", r) for r in READINGS},
    "stated_brier": "log_score",
    "stated_brier_imputed": "stated_brier_imputed",
    "log_score": "log_score",
    "rel_log_score": "log_score",
}
_SHORT = {"return_pct": "return", "log_score": "log", "stated_brier_imputed": "imputed"}
WideOption = Annotated[
    bool, typer.Option("--wide", help="Print every leaderboard column (wider than 80 columns).")
]
EachReplicateOption = Annotated[
    bool,
    typer.Option("--each-replicate", help="List each replicate's own row under its agent's mean row."),
]
REPLICATES_NOTE = (
    "\n×N: the mean of an agent's N replicates; its interval resamples the markets and the "
    "replicates (docs/scoring.md). --each-replicate lists each replicate."
)
WIDE_HINT = (
    "--wide shows value, P/L, the other Brier reading, difficulty-adjusted Briers, stated overall, "
    "bets, win rate, p vs #1 and labels."
)


def print_leaderboard(
    console: Console, document: dict[str, Any], *, wide: bool = False, each_replicate: bool = False
) -> None:
    """Print the table; a wide one at its natural width, so no terminal or pipe cuts a column."""
    table = render(document, wide=wide, each_replicate=each_replicate)
    if not wide:
        console.print(table)
        return
    natural = console.measure(table, options=console.options.update_width(10_000)).maximum
    width = max(console.width, natural)
    plain_console(file=console.file, width=width, no_color=console.no_color).print(table)


def render(document: dict[str, Any], *, wide: bool = False, each_replicate: bool = False) -> Table:
    """The rich table of a leaderboard document: the compact layout, or every column; with
    ``each_replicate``, a replicated agent's replicates listed under its mean row."""
    level = round(document["bootstrap"]["confidence"] * 100)
    cohorts = document["cohorts"]
    table = Table(
        title=f"Leaderboard — {', '.join(cohorts) if len(cohorts) <= 3 else f'{len(cohorts)} cohorts'}",
        caption=escape(_caption(document, level, wide=wide)),
        caption_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        collapse_padding=True,
    )
    implied, other = _readings(document)
    shown = _rows(document, each_replicate=each_replicate)
    if wide:
        _wide(table, shown, document["sort_by"], level, implied, other)
    elif not any(agent["bets"] for agent in shown):
        _compact_stated(table, shown, level)
    else:
        _compact(table, shown, level, implied)
    return table


def _rows(document: dict[str, Any], *, each_replicate: bool) -> list[dict[str, Any]]:
    """The board's rows, each replicated agent's replicates after it when asked for."""
    if not each_replicate:
        return list(document["agents"])
    copies: dict[str, list[dict[str, Any]]] = {}
    for row in document["replicate_rows"]:
        copies.setdefault(row["agent"].rpartition(REPLICATE_MARK)[0], []).append(row)
    shown = []
    for row in document["agents"]:
        shown.append(row)
        shown += [{**copy, "rank": None, "_replicate": True} for copy in copies.get(row["agent"], [])]
    return shown


def _compact(table: Table, shown: list[dict[str, Any]], level: int, implied: Reading) -> None:
    """Rank, agent, return, headline Brier, stated imputed, take, status: 80 columns, 20-char names."""
    brier = suffixed("brier", implied)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Agent", overflow="fold")  # the only column that may wrap: names are never cut
    for header in (f"Return %\n{level}% CI", f"{BY_KEY[brier].display_label(implied)}\n{level}% CI"):
        table.add_column(escape(header), justify="right", no_wrap=True)
    table.add_column("Stated\nimputed", justify="right", no_wrap=True)
    table.add_column("Tourn.\ntake", justify="right", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    for agent in shown:
        table.add_row(
            _rank(agent),
            _agent(agent),
            _return(agent),
            _with_interval(agent[brier], agent[f"{brier}_lo"], agent[f"{brier}_hi"], "{:.3f}", "{:.2f}"),
            _with_interval(agent["stated_brier_imputed"], None, None, "{:.3f}", ""),
            _share(agent["tournament_take"]),
            _status(agent),
        )


def _compact_stated(table: Table, shown: list[dict[str, Any]], level: int) -> None:
    """Where nobody bet (an imported forecast set): rank, agent, the stated Brier overall and as
    resolved with its interval, events scored (still open), status."""
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Agent", overflow="fold")
    for header in ("Stated\noverall", f"Stated\n{level}% CI", "Events\n(open)"):
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    for agent in shown:
        table.add_row(
            _rank(agent),
            _agent(agent),
            _with_interval(agent["stated_brier_overall"], None, None, "{:.3f}", ""),
            _score(agent, "stated_brier"),
            f"{agent['stated_events']}\n({agent['provisional_events']})",
            _status(agent),
        )


def _wide(
    table: Table, shown: list[dict[str, Any]], sort_by: str, level: int, implied: Reading, other: Reading
) -> None:
    """Every column: money, both bet readings, stated imputed, the comparison with #1, labels."""
    compared = COMPARISON_OF.get(sort_by, "return_pct")
    headers = (
        "#",
        "Agent",
        "Value $",
        "P/L $",
        f"Return %\n{level}% CI",
        escape(f"{BY_KEY[suffixed('brier', implied)].display_label(implied)}\n{level}% CI"),
        escape(f"Brier\n[{other}]"),
        escape(f"Brier adj.\n{level}% CI"),
        escape(f"adj.\n[{other}]"),
        "Stated\nimputed",
        "Stated\noverall",
        f"Stated adj.\n{level}% CI",
        "Tourn.\ntake",
        "Bets\n(res.)",
        "Win\nrate",
        f"p vs #1\n{_SHORT.get(compared, compared)}",
        "Labels\nP/L, Brier",
    )
    for header in headers:
        left = header in ("Agent", "Labels\nP/L, Brier")
        table.add_column(header, justify="left" if left else "right", no_wrap=True)
    brier, brier_other = suffixed("brier", implied), suffixed("brier", other)
    adjusted, adjusted_other = suffixed("brier_adjusted", implied), suffixed("brier_adjusted", other)
    for agent in shown:
        table.add_row(
            _rank(agent),
            _agent(agent),
            _money(agent["value"]),
            _money(agent["pnl"], signed=True),
            _return(agent),
            _score(agent, brier),
            _with_interval(agent[brier_other], None, None, "{:.3f}", ""),
            _score(agent, adjusted),
            _with_interval(agent[adjusted_other], None, None, "{:.3f}", ""),
            _score(agent, "stated_brier_imputed"),
            _with_interval(agent["stated_brier_overall"], None, None, "{:.3f}", ""),
            _score(agent, "stated_brier_adjusted"),
            _share(agent["tournament_take"]),
            _bets(agent),
            _win_rate(agent),
            _p_value(agent[f"vs_leader_{compared}_p_value"], agent[f"vs_leader_{compared}_few_markets"]),
            "FAILED\n(not ranked)"
            if agent["failed"]
            else "\n".join((agent["return_label"] or "—", _brier_label(agent, implied))),
        )


def _score(agent: dict[str, Any], key: str) -> str:
    """A score to three places with its interval to two, or "—"."""
    return _with_interval(agent[key], agent[f"{key}_lo"], agent[f"{key}_hi"], "{:.3f}", "{:.2f}")


def _readings(document: dict[str, Any]) -> tuple[Reading, Reading]:
    """The headline reading of the bet-implied Brier and the one shown beside it."""
    implied: Reading = document["implied"]
    return implied, next(r for r in READINGS if r != implied)


def _rank(agent: dict[str, Any]) -> str:
    return "—" if agent["rank"] is None else str(agent["rank"])


def _agent(agent: dict[str, Any]) -> str:
    """The name in full (plain text: rich markup in a name is escaped), ``(mock)`` for an agent of
    the mock provider, and its marks."""
    marks = (BASELINE_MARK if agent["baseline"] else "") + (FEW_MARK if agent["few_markets"] else "")
    marks += (CONFLICT_MARK if agent["label_conflict"] else "") + (EXTERNAL_MARK if agent["external"] else "")
    marks += "".join(dict.fromkeys(flag.mark for flag in flags_of(agent)))
    copies = agent.get("replicates") or 1
    name = f"  {agent['agent']}" if agent.get("_replicate") else agent["agent"]
    name += (f" ×{copies}" if copies > 1 else "") + (" (mock)" if agent.get("mock") else "")
    return escape(f"{name} {marks}".rstrip())


def _brier_label(agent: dict[str, Any], reading: Reading) -> str:
    """The reading's Brier label, marked when the reading contradicts the agent's bets."""
    label = agent[suffixed("brier_label", reading)] or "—"
    return f"{label} ¶" if agent[suffixed("brier_incoherent", reading)] else label


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _return(agent: dict[str, Any]) -> str:
    return _with_interval(
        agent["return_pct"], agent["return_pct_lo"], agent["return_pct_hi"], "{:+.1f}", "{:+.0f}"
    )


def _bets(agent: dict[str, Any]) -> str:
    """Bets placed and resolved; a replicated agent's are its replicates' mean (to one decimal)."""
    return f"{_count(agent['bets'])}\n({_count(agent['resolved_bets'])})"


def _count(value: float) -> str:
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def _win_rate(agent: dict[str, Any]) -> str:
    return "—" if agent["win_rate"] is None else f"{agent['win_rate']:.0%}"


def _status(agent: dict[str, Any]) -> str:
    """FAILED (not ranked: too few valid answers), provisional (stated events still open), external
    (an imported forecaster: its stated scores are in --wide and --json), or ok."""
    if agent["failed"]:
        return "FAILED"
    if agent["provisional_events"]:
        return "provisional"
    return "external" if agent["external"] else "ok"


def _caption(document: dict[str, Any], level: int, *, wide: bool) -> str:
    boot, agents, implied = document["bootstrap"], document["agents"], document["implied"]
    return (
        _cohorts_caption(document)
        + f"{BASELINE_MARK} baseline bot   {FEW_MARK} fewer than {document['min_markets']} resolved markets: "
        f"intervals are wide   {CONFLICT_MARK} Brier and return labels disagree\n"
        f"{LEGEND} (notes below)"
        + (f"   {EXTERNAL_MARK} external forecaster (no bets)" if _any(document, "external") else "")
        + "\n"
        + (
            ""
            if wide
            else "Status: FAILED is not ranked (too few valid answers); provisional: stated "
            f"events still open. {WIDE_HINT}\n"
        )
        + f"Intervals: {level}% market-clustered bootstrap, "
        f"{boot['replicates']} replicates, seed {boot['seed']}. Brier (bets) is the {implied} reading "
        f"({READING_RULES[implied]}; see docs/scoring.md). "
        f"Sorted by {BY_KEY[document['sort_by']].display_label(implied)}."  # a sortable metric's key
        + (f" As of {document['as_of']}." if document["as_of"] else "")
        + "".join(f"\n{mark} {note}".replace("\n ", "\n") for mark, note in marked_notes(agents, implied))
        + (REPLICATES_NOTE if any((a.get("replicates") or 1) > 1 for a in agents) else "")
        + "".join(f"\n{note}" for note in stated_notes(agents))
        + ("".join(f"\n{note}" for note in adjusted_notes(agents)) if wide else "")
    )


def _cohorts_caption(document: dict[str, Any]) -> str:
    """The cohorts scored, in one line (with the flags that choose others when none was named)."""
    hint = " --cohort ID picks another; --all pools every cohort that ran." if _latest(document) else ""
    return f"{cohort_line(document)}{hint}\n"


def _latest(document: dict[str, Any]) -> bool:
    return document.get("cohort_selection") == "latest"


def _any(document: dict[str, Any], key: str) -> bool:
    return any(agent[key] for agent in document["agents"])


def _money(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "—"
    return f"{'+' if signed and value > 0 else ''}{Decimal(str(value)):,.0f}"


def _with_interval(value: float | None, lo: float | None, hi: float | None, fmt: str, bound: str) -> str:
    if value is None:
        return "—"
    if lo is None or hi is None:
        return _shown(fmt, value)
    return f"{_shown(fmt, value)}\n[{_shown(bound, lo)}, {_shown(bound, hi)}]"


def _shown(fmt: str, value: float) -> str:
    """``value`` formatted, a negative value that rounds to zero shown as zero (never ``-0``)."""
    text = fmt.format(value)
    return fmt.format(0.0) if float(text.replace(",", "")) == 0 else text


def _p_value(p: float | None, few: bool | None) -> str:
    if p is None:
        return "—"
    return f"{p:.3f}{' ' + FEW_MARK if few else ''}"
