"""Every relative link and anchor in README.md and docs/ resolves (the manual moved to docs/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


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


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
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
