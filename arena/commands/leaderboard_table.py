"""The printed leaderboard (``arena leaderboard``, ``arena demo``, ``arena replay``): two layouts.

The default layout fits an 80-column terminal or a pipe, where rich would otherwise cut names
and headers to "favor…": every agent name in full (long names fold onto a second line, never
cut) and the key figures only: rank, return with its interval, the headline Brier (bets) with its
interval, bets, win rate and a status word. ``--wide`` prints every column at its natural width,
however wide the terminal, for a pager or a file (``less -S``). The JSON is the complete record.
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
from arena.reports.notes import stated_notes
from arena.scoring.load.frames import READINGS, Reading, suffixed
from arena.scoring.metrics.registry import BY_KEY

BASELINE_MARK = "†"
FEW_MARK = "‡"
CONFLICT_MARK = "§"  # the Brier and return labels disagree: see the footnote
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
WIDE_HINT = "--wide shows value, P/L, the other Brier reading, stated imputed, p vs #1 and labels."


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
    """Rank, agent, return, headline Brier, bets, win rate, status: 80 columns with 20-char names."""
    brier = suffixed("brier", implied)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("Agent", overflow="fold")  # the only column that may wrap: names are never cut
    for header in (f"Return %\n{level}% CI", f"{BY_KEY[brier].display_label(implied)}\n{level}% CI"):
        table.add_column(escape(header), justify="right", no_wrap=True)
    table.add_column("Bets\n(res.)", justify="right", no_wrap=True)
    table.add_column("Win\nrate", justify="right", no_wrap=True)
    table.add_column("Status", no_wrap=True)
    for agent in shown:
        table.add_row(
            _rank(agent),
            _agent(agent),
            _return(agent),
            _with_interval(agent[brier], agent[f"{brier}_lo"], agent[f"{brier}_hi"], "{:.3f}", "{:.2f}"),
            _bets(agent),
            _win_rate(agent),
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
        "Stated\nimputed",
        "Bets\n(res.)",
        "Win\nrate",
        f"p vs #1\n{_SHORT.get(compared, compared)}",
        "Labels\nP/L, Brier",
    )
    for header in headers:
        left = header in ("Agent", "Labels\nP/L, Brier")
        table.add_column(header, justify="left" if left else "right", no_wrap=True)
    brier, brier_other = suffixed("brier", implied), suffixed("brier", other)
    for agent in shown:
        table.add_row(
            _rank(agent),
            _agent(agent),
            _money(agent["value"]),
            _money(agent["pnl"], signed=True),
            _return(agent),
            _with_interval(agent[brier], agent[f"{brier}_lo"], agent[f"{brier}_hi"], "{:.3f}", "{:.2f}"),
            _with_interval(agent[brier_other], None, None, "{:.3f}", ""),
            _with_interval(
                agent["stated_brier_imputed"],
                agent["stated_brier_imputed_lo"],
                agent["stated_brier_imputed_hi"],
                "{:.3f}",
                "{:.2f}",
            ),
            _bets(agent),
            _win_rate(agent),
            _p_value(agent[f"vs_leader_{compared}_p_value"], agent[f"vs_leader_{compared}_few_markets"]),
            "FAILED\n(not ranked)"
            if agent["failed"]
            else "\n".join(
                label or "—" for label in (agent["return_label"], agent[suffixed("brier_label", implied)])
            ),
        )


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
    marks += CONFLICT_MARK if agent["label_conflict"] else ""
    copies = agent.get("replicates") or 1
    name = f"  {agent['agent']}" if agent.get("_replicate") else agent["agent"]
    name += (f" ×{copies}" if copies > 1 else "") + (" (mock)" if agent.get("mock") else "")
    return escape(f"{name} {marks}".rstrip())


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
    """FAILED (not ranked: too few valid answers), provisional (stated events still open), or ok."""
    if agent["failed"]:
        return "FAILED"
    return "provisional" if agent["provisional_events"] else "ok"


def _caption(document: dict[str, Any], level: int, *, wide: bool) -> str:
    boot = document["bootstrap"]
    return (
        f"{BASELINE_MARK} baseline bot   {FEW_MARK} fewer than {document['min_markets']} resolved markets: "
        f"intervals are wide   {CONFLICT_MARK} Brier and return labels disagree (notes below)\n"
        + (
            ""
            if wide
            else "Status: FAILED is not ranked (too few valid answers); provisional: stated "
            f"events still open. {WIDE_HINT}\n"
        )
        + f"Intervals: {level}% market-clustered bootstrap, "
        f"{boot['replicates']} replicates, seed {boot['seed']}. Brier (bets) read as {document['implied']} "
        f"(see docs/scoring.md). Sorted by {document['sort_by']}."
        + (f" As of {document['as_of']}." if document["as_of"] else "")
        + "".join(f"\n{CONFLICT_MARK} {note}" for note in document["footnotes"])
        + (REPLICATES_NOTE if any((a.get("replicates") or 1) > 1 for a in document["agents"]) else "")
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
