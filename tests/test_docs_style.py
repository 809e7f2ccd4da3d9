"""The manual says what a user can do and how: no measurement diary, no cells a reader must scroll.

Every Markdown page (``README.md``, ``CONTRIBUTING.md`` and ``docs/**/*.md``) is checked outside
fenced code blocks for diary narration ("Latest (…)", "before that", "previously", "earlier"
other than "earlier than", issue numbers, dated headings), for the scoring sources named as
"seed 00N" instead of by name, for references to files the repository does not ship, and for
table cells longer than ``MAX_CELL`` characters. A failure lists ``page:line`` and the text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [
        *(p for p in (ROOT / "README.md", ROOT / "CONTRIBUTING.md") if p.exists()),
        *(ROOT / "docs").rglob("*.md"),
    ]
)
MAX_CELL = 300
NARRATION = {
    "an issue number": re.compile(r"\bissues?\s+#?\d+", re.I),
    "'earlier' narration": re.compile(r"\bearlier\b(?!\s+than\b)", re.I),
    "'before that' narration": re.compile(r"\bbefore that\b", re.I),
    "'previously' narration": re.compile(r"\bpreviously\b", re.I),
    "a 'Latest (date)' entry": re.compile(r"\bLatest \("),
    "a seed number instead of the source's name": re.compile(r"\bseeds? 00[0-3]\b", re.I),
    "a file the repository does not ship": re.compile(r"DESIGN\.md"),
}
DATED_HEADING = re.compile(r"^#{1,6} .*\(20\d\d-\d\d-\d\d\)")


def table_cells(line: str) -> list[str]:
    """The cells of a Markdown table row: split on ``|`` outside code spans and escapes."""
    cells, current, in_code, escaped = [], [], False, False
    for char in line.strip().strip("|"):
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == "`":
            in_code = not in_code
            current.append(char)
        elif char == "|" and not in_code:
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    cells.append("".join(current).strip())
    return cells


def violations(text: str) -> list[tuple[int, str, str]]:
    """(line number, what is wrong, the offending text) for each breach of the style rules."""
    found, fence = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if fence:
            continue
        if line.lstrip().startswith("|"):
            for cell in table_cells(line):
                if len(cell) > MAX_CELL:
                    found.append((number, f"a table cell of {len(cell)} characters", cell[:80] + "…"))
        if DATED_HEADING.match(line):
            found.append((number, "a dated heading", line))
        for what, pattern in NARRATION.items():
            for match in pattern.finditer(line):
                start = max(match.start() - 30, 0)
                found.append((number, what, line[start : match.end() + 30]))
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_reads_as_a_manual_not_a_diary(page: Path) -> None:
    name = page.relative_to(ROOT)
    report = [
        f"{name}:{n}: {what}: {text!r}" for n, what, text in violations(page.read_text(encoding="utf-8"))
    ]
    if report:
        pytest.fail("\n".join(report), pytrace=False)


def test_the_checker_finds_each_kind_of_breach_and_spares_code_and_legitimate_words() -> None:
    text = "\n".join(
        [
            "# Scoring (2026-11-28)",
            "Latest (2026-11-28): faster. Before that: slower, as issue #15 said.",
            "It was previously slow; earlier runs differ. Rounds earlier than the cutoff are fine.",
            "See seed " + "000 and DESIGN" + ".md.",  # split: the repository names no seed file
            "| key | meaning |",
            "|---|---|",
            f"| `a|b` | {'x' * (MAX_CELL + 1)} |",
            f"| short | {'y' * MAX_CELL} |",
            "```text",
            "earlier, previously, issue 7 inside a code block",
            "```",
        ]
    )
    kinds = [(n, what) for n, what, _ in violations(text)]
    assert kinds == [
        (1, "a dated heading"),
        (2, "an issue number"),
        (2, "'before that' narration"),
        (2, "a 'Latest (date)' entry"),
        (3, "'earlier' narration"),
        (3, "'previously' narration"),
        (4, "a seed number instead of the source's name"),
        (4, "a file the repository does not ship"),
        (7, f"a table cell of {MAX_CELL + 1} characters"),
    ], kinds
    assert table_cells("| `a|b` | c \\| d |") == ["`a|b`", "c \\| d"]
