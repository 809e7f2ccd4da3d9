"""``report.md``: the report's summary as Markdown tables, for reading in a terminal or a pull request.

Every value goes through ``markdown_text``: names, questions, error messages and model-chosen
ids are data, and must render as the characters they are, never as HTML, a link or an image (see
``arena.reports.escaping``). It escapes a character only where it would open something, so our
own numbers, times and titles read in the raw file as written. Only our own prose (section
titles, methodology, file names) is written as is. The config is not repeated here: a code block
would show its text unescaped, and ``config.toml`` beside this file is that text.
"""

from __future__ import annotations

from arena.reports.csv_cells import CSV_NOTE
from arena.reports.escaping import markdown_text
from arena.reports.summary import Row, Summary


def render(summary: Summary, files: list[str]) -> str:
    parts = [f"# {markdown_text(summary.title)}", "", *_facts(summary.facts), ""]
    parts += ["## Leaderboard", "", _table(summary.leaderboard), ""]
    parts += (
        [*(f"- Note: {markdown_text(note)}" for note in summary.footnotes), ""] if summary.footnotes else []
    )
    parts += ["## Scores", "", _table(summary.scores), ""]
    parts += ["### Every metric", "", "Also in [metrics.csv](metrics.csv).", "", _table(summary.metrics), ""]
    parts += [
        "## Calibration",
        "",
        _table(summary.calibration) if summary.calibration else "No resolved forecasts yet.",
        "",
    ]
    parts += ["## Agents", ""]
    for name, facts in summary.agents:
        parts += [f"### {markdown_text(name)}", "", *_facts(facts), ""]
    parts += ["## Errors", "", _table(summary.errors) if summary.errors else "No decision failed.", ""]
    parts += ["## Configuration", "", "The frozen config, as TOML: [config.toml](config.toml).", ""]
    parts += ["## Methodology", "", *(f"{p}\n" for p in summary.notes)]
    parts += ["## Files", "", *(f"- [{f}]({f})" for f in files), "", CSV_NOTE, ""]
    return "\n".join(parts)


def _facts(facts: list[tuple[str, str]]) -> list[str]:
    return [f"- **{markdown_text(k)}:** {markdown_text(v)}" for k, v in facts]


def _table(rows: list[Row]) -> str:
    if not rows:
        return "No rows."
    columns = list(rows[0])
    lines = ["| " + " | ".join(markdown_text(c) for c in columns) + " |"]
    lines += ["|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(markdown_text(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)
