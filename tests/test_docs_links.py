"""Every relative link and anchor in README.md and docs/ resolves, and every page the code cites
(``docs/<page>.md "Heading"``) exists with that heading."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = [
    p
    for folder in ("arena", "agents", "markets", "portfolio", "dashboard")
    for p in (ROOT / folder).rglob("*.py")
]
CITED = re.compile(r"(docs/[\w/-]+\.md)(?:,? \"([^\"]+)\")?")


def _anchors(text: str) -> set[str]:
    """GitHub's heading slugs: lower case, punctuation dropped, spaces to hyphens (code fences skipped)."""
    found, fence = set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"#{1,6} (.+)", line)):
            found.add(re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-"))
    return found


def _outside_code(text: str) -> str:
    return re.sub(r"```.*?```", "", text, flags=re.S)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(_outside_code(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or (
            anchor and file.suffix == ".md" and anchor not in _anchors(file.read_text())
        ):
            broken.append(target)
    assert broken == [], f"{page.name}: broken links {broken}"


def test_the_readme_is_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_pages_and_headings_the_code_cites_exist() -> None:
    broken = []
    for source in CODE:
        for page, heading in CITED.findall(source.read_text()):
            file = ROOT / page
            headings = file.read_text() if file.exists() else ""
            if not file.exists() or (
                heading and not re.search(rf"^#+ .*{re.escape(heading)}", headings, re.M)
            ):
                broken.append(f"{source.relative_to(ROOT)}: {page} {heading!r}")
    assert broken == []


def test_every_design_note_is_in_the_index() -> None:
    index = (ROOT / "docs" / "design" / "README.md").read_text()
    notes = sorted(p.name for p in (ROOT / "docs" / "design").glob("*.md") if p.name != "README.md")
    assert [n for n in notes if f"]({n})" not in index] == []
