"""``report.html``: one self-contained page that opens offline, in any browser, years later.

plotly.js is embedded once, inline, with the first chart; the other charts reuse it. Every
text from the database is HTML-escaped. Charts come from ``arena.figures`` so the report
draws exactly what the dashboard shows.

The page reads like a paper's appendix: tables with one row per agent fit the column (an
interval goes under its value, an agent's name and flags wrap), the complete metrics table is
folded in a ``<details>`` (and scrolls inside its own box), and the config is its TOML text.
"""

from __future__ import annotations

import re
from html import escape
from typing import cast

import plotly.graph_objects as go
import polars as pl

from arena.figures import AgentStyle, agent_styles, equity_curves, leaderboard_intervals, reliability_diagrams
from arena.reports.content import ReportContent
from arena.reports.csv_cells import CSV_NOTE
from arena.reports.series import thin_marks
from arena.reports.summary import Row, Summary
from arena.scoring.board.notes import chart_flags
from arena.scoring.load.frames import Reading, suffixed
from arena.scoring.metrics.registry import BY_KEY
from arena.scoring.metrics.spec import Metric

STYLE = """
body{font-family:Inter,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#111827;background:#f9fafb}
main{max-width:1150px;margin:0 auto;padding:24px 32px 64px;background:#fff}
h1{font-size:28px;margin:8px 0 4px}
h2{font-size:21px;margin-top:40px;border-bottom:1px solid #e5e7eb;padding-bottom:6px}
h3{font-size:16px;margin:24px 0 6px}table{border-collapse:collapse;font-size:13px;margin:8px 0;width:100%}
th,td{border-bottom:1px solid #e5e7eb;padding:5px 8px;text-align:right;white-space:nowrap;vertical-align:top}
th{white-space:normal}.ci{display:block;color:#6b7280;font-size:12px}
details{margin:12px 0}summary{cursor:pointer;font-size:14px;color:#374151}
th{background:#f3f4f6;font-weight:600}td:first-child,th:first-child,td.text,th.text{text-align:left}
td.text{white-space:normal}dl{display:grid;grid-template-columns:max-content auto;gap:4px 16px;font-size:14px}
dt{color:#6b7280}dd{margin:0}pre{background:#f3f4f6;padding:12px;font-size:12px;overflow:auto;max-height:480px}
nav a{margin-right:14px;font-size:14px}.scroll{overflow-x:auto}
.note{color:#4b5563;font-size:14px;line-height:1.5}
"""
SECTIONS = (
    "Leaderboard",
    "Scores",
    "Equity curves",
    "Calibration",
    "Agents",
    "Errors",
    "Configuration",
    "Methodology",
    "Files",
)


def render(summary: Summary, content: ReportContent, files: list[str]) -> str:
    """The whole page (figures built from the content, texts from the summary)."""
    charts = _charts(content)
    body = [
        f"<h1>{escape(summary.title)}</h1>",
        "<nav>" + "".join(f'<a href="#{_anchor(s)}">{s}</a>' for s in SECTIONS) + "</nav>",
        _facts(summary.facts),
        _section(
            "Leaderboard",
            _table(summary.leaderboard, wide="Agent") + _notes(summary.footnotes) + charts[0] + charts[1],
        ),
        _section(
            "Scores",
            _table(summary.scores, wide="Agent")
            + f"<details><summary>Every metric ({len(summary.metrics)} metrics × "
            f"{max(len(summary.metrics[0]) - 2, 0)} agents; also in metrics.csv)</summary>"
            f"{_table(summary.metrics, wide='Metric')}</details>",
        ),
        _section("Equity curves", charts[2]),
        _section("Calibration", charts[3] + _table(summary.calibration)),
        _section(
            "Agents", "".join(f"<h3>{escape(name)}</h3>{_facts(facts)}" for name, facts in summary.agents)
        ),
        _section(
            "Errors",
            _table(summary.errors, wide="Message") if summary.errors else "<p>No decision failed.</p>",
        ),
        _section(
            "Configuration",
            f'<p class="note">The frozen config, as in config.toml:</p><pre>{escape(summary.config)}</pre>',
        ),
        _section("Methodology", "".join(f'<p class="note">{escape(p)}</p>' for p in summary.notes)),
        _section(
            "Files",
            "<ul>"
            + "".join(f'<li><a href="{escape(f)}">{escape(f)}</a></li>' for f in files)
            + f'</ul><p class="note">{escape(CSV_NOTE)}</p>',
        ),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(summary.title)}</title><style>{STYLE}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )


def _charts(content: ReportContent) -> list[str]:
    """Return and Brier intervals, equity curves, reliability diagrams (plotly.js with the first)."""
    styles = agent_styles(content.tables["agents"])
    board = content.leaderboard
    # A Float64 column's max is a float or None (polars types it as any Python literal).
    bankroll = float(cast(float | None, board["bankroll"].cast(pl.Float64).max()) or 0) if len(board) else 0.0
    marks = thin_marks(content.tables["portfolio_snapshots"])
    rounds = content.tables["rounds"]["scheduled_at"].to_list()
    bins = content.tables["calibration"]
    implied: Reading = content.scoring["implied"]
    brier = BY_KEY[suffixed("brier", implied)]
    figures: list[go.Figure | None] = [
        _intervals(board, BY_KEY["return_pct"], styles, implied) if len(board) else None,
        _intervals(board, brier, styles, implied) if board[brier.key].is_not_null().any() else None,
        equity_curves(marks, styles, bankroll=bankroll, decision_times=rounds) if len(marks) else None,
        reliability_diagrams(bins, styles) if len(bins) else None,
    ]
    html, embedded = [], False
    for index, fig in enumerate(figures):
        if fig is None:
            html.append('<p class="note">Nothing to chart yet.</p>')
            continue
        html.append(
            fig.to_html(
                full_html=False,
                include_plotlyjs=not embedded,
                div_id=f"figure-{index}",
                config={"displaylogo": False, "responsive": True},
            )
        )
        embedded = True
    return html


def _intervals(
    board: pl.DataFrame, metric: Metric, styles: dict[str, AgentStyle], implied: Reading
) -> go.Figure:
    axis = metric.axis_title(implied)
    flags = chart_flags(board, metric.key)
    return leaderboard_intervals(
        board, metric.key, styles, axis=axis, reference=metric.reference, flags=flags
    )


def _notes(notes: list[str]) -> str:
    return "".join(f'<p class="note">Note: {escape(note)}</p>' for note in notes)


def _section(title: str, inner: str) -> str:
    return f'<section id="{_anchor(title)}"><h2>{escape(title)}</h2>{inner}</section>'


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


def _facts(facts: list[tuple[str, str]]) -> str:
    return "<dl>" + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts) + "</dl>"


def _table(rows: list[Row], *, wide: str = "") -> str:
    """Rows as a table; the ``wide`` column's text wraps, and an interval goes under its value."""
    if not rows:
        return '<p class="note">No rows.</p>'
    head = "".join(f"<th{' class=text' if c == wide else ''}>{escape(c)}</th>" for c in rows[0])
    body = "".join(
        "<tr>"
        + "".join(
            f"<td class=text>{escape(v)}</td>" if c == wide else f"<td>{_cell(v)}</td>"
            for c, v in row.items()
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


_INTERVAL = re.compile(r"^(.*\S) (\[[^\[\]]*\])$")


def _cell(value: str) -> str:
    """A value, its interval (``0.166 [0.125, 0.212]``) on a line of its own under it."""
    found = _INTERVAL.match(value)
    if found is None:
        return escape(value)
    return f'{escape(found.group(1))}<span class="ci">{escape(found.group(2))}</span>'
