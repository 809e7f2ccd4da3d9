"""Shipped text names its sources and points only at files the repository ships.

The arena's rules come from four published sources (docs/references.md): the Metaculus
tournament rules, the Autocast competition rules, Forecaster Arena's scoring and the
ForecastBench paper. Code, tests, docs, data notes, the dashboard and JSON name them; none calls
one by a numbered seed (a number only the project's authors knew) or points at a design guide or
a folder outside the repository. The docs pages are checked by a test of their own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {".venv", "venv", ".git", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"}
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".yml", ".yaml"} | {".cfg", ".ini", ".html", ".js"}
TEXT_NAMES = {"Makefile", "Dockerfile"}
FORBIDDEN = re.compile(
    r"\bseeds?[ _/-]?0\d\d\b"  # a numbered seed, or the folder of the seed documents
    r"|DESIGN\.md|\.\./shared|/work/shared",  # files the repository does not ship
    re.IGNORECASE,
)


def shipped_files(root: Path) -> Iterator[Path]:
    """Every text file under ``root`` that the repository ships (no virtualenvs, caches, builds)."""
    for path in sorted(root.rglob("*")):
        parts = set(path.relative_to(REPO).parts)
        if parts & SKIPPED_DIRS or any(p.endswith(".egg-info") for p in parts) or not path.is_file():
            continue
        # this file spells the patterns out in its own tests
        if (path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES) and path != Path(__file__).resolve():
            yield path


def offences(paths: Iterator[Path]) -> list[str]:
    """``path:line: text`` of every forbidden reference in ``paths``."""
    found = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:120]}")
    return found


def test_the_pattern_catches_what_it_should() -> None:
    for text in ("seed 000", "Seed 003", "seeds/002-forecaster", "see DESIGN.md", "../shared/x"):
        assert FORBIDDEN.search(text), text
    for text in ("seed 0", "seed=42", "the random seed", "random_seed 7", "docs/design/README.md"):
        assert not FORBIDDEN.search(text), text


def test_code_tests_data_and_json_name_their_sources() -> None:
    outside_docs = (p for p in shipped_files(REPO) if p.relative_to(REPO).parts[0] != "docs")
    assert offences(outside_docs) == []


def test_docs_pages_name_their_sources() -> None:
    assert offences(shipped_files(REPO / "docs")) == []
