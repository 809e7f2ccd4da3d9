"""report.md of a cohort full of hostile text renders no markup under a real GFM renderer."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from tests.safety.conftest import Tracker


def test_report_md_renders_no_markup(cohort: tuple[str, str, Path], tracker: Tracker) -> None:
    markdown = (cohort[2] / "report.md").read_text()
    assert not re.search(r"(?<!\\)[<`]", markdown)  # every < and ` of the data is escaped
    assert "\\<svg onload=" in markdown and "!\\[t\\](http\\://" in markdown  # and the data is there
    rendered = MarkdownIt("gfm-like").render(markdown)
    assert tracker.url not in " ".join(re.findall(r'(?:href|src)="([^"]*)"', rendered))
    assert not re.search(r"<(img|script|iframe|object|svg|style|link)\b", rendered)
    assert "javascript:" not in " ".join(re.findall(r'href="([^"]*)"', rendered))


def test_report_md_escapes_only_what_would_open_markup(cohort: tuple[str, str, Path]) -> None:
    """Our own text reads as written (no ``\\:`` in times and titles, no ``\\$`` in money), while
    the hostile text beside it is still neutralised (the test above renders it)."""
    markdown = (cohort[2] / "report.md").read_text()
    period = next(line for line in markdown.splitlines() if line.startswith("- **Period:**"))
    assert re.fullmatch(
        r"- \*\*Period:\*\* \d{4}-\d\d-\d\d \d\d:\d\d UTC to \d{4}-\d\d-\d\d \d\d:\d\d UTC", period
    )
    assert markdown.startswith("# Cohort report: ")
    assert "\\$" not in markdown.split("## Leaderboard", 1)[1].split("## Scores", 1)[0]
    assert "\\<svg onload=" in markdown and "!\\[t\\](http\\://" in markdown
