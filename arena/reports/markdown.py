"""``report.md``: the report's summary as Markdown tables, for reading in a terminal or a pull request."""

from __future__ import annotations

from arena.reports.summary import Row, Summary


def render(summary: Summary, files: list[str]) -> str:
    parts = [f"# {summary.title}", "", *(f"- **{k}:** {_cell(v)}" for k, v in summary.facts), ""]
    parts += ["## Leaderboard", "", _table(summary.leaderboard), ""]
    parts += [*(f"- Note: {_cell(note)}" for note in summary.footnotes), ""] if summary.footnotes else []
    parts += ["## Scores", "", _table(summary.scores), ""]
    parts += [
        "## Calibration",
        "",
        _table(summary.calibration) if summary.calibration else "No resolved forecasts yet.",
        "",
    ]
    parts += ["## Agents", ""]
    for name, facts in summary.agents:
        parts += [f"### {_cell(name)}", "", *(f"- **{k}:** {_cell(v)}" for k, v in facts), ""]
    parts += ["## Errors", "", _table(summary.errors) if summary.errors else "No decision failed.", ""]
    parts += ["## Methodology", "", *(f"{p}\n" for p in summary.notes)]
    parts += ["## Files", "", *(f"- [{f}]({f})" for f in files), ""]
    return "\n".join(parts)


def _table(rows: list[Row]) -> str:
    if not rows:
        return "No rows."
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(_cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def _cell(text: str) -> str:
    """Text that cannot break a table row or start markup: pipes escaped, newlines flattened."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")
