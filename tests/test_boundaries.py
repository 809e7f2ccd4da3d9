"""The dependency rules of DESIGN.md ("The house"), checked by parsing every source file.

- ``portfolio/`` is pure accounting: no other package of this repository, and no database,
  network, filesystem, dataframe or UI library.
- ``agents/`` and ``markets/`` never import ``arena`` (the composition root) or ``dashboard``.
- Nothing reads the wall clock (``datetime.now()``, ``date.today()``, ``time.time()``...) except
  ``arena/clock.py``: time is injected.

Imports are found with ``ast`` wherever they are (module level, inside functions, under
``TYPE_CHECKING``), relative imports are resolved, and ``importlib.import_module("x")`` /
``__import__("x")`` with a literal name count as imports. A failure names file, line and rule.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIPPED_DIRS = {
    ".venv",
    "venv",
    ".git",
    "build",
    "dist",
    "node_modules",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
}

REPO_PACKAGES = frozenset({"arena", "agents", "markets", "dashboard"})
IO_LIBRARIES = frozenset(
    {
        *("sqlmodel", "sqlalchemy", "alembic", "psycopg", "psycopg2", "sqlite3"),  # databases
        *("httpx", "requests", "aiohttp", "urllib", "urllib3", "http", "socket"),  # network
        *("os", "pathlib", "io", "shutil", "tempfile", "subprocess"),  # filesystem, processes
        *("polars", "pandas", "pyarrow"),  # dataframes
        *("streamlit", "plotly", "apscheduler", "typer", "rich"),  # UI, scheduling, CLI
    }
)
FORBIDDEN: dict[str, tuple[frozenset[str], str]] = {
    "portfolio": (
        REPO_PACKAGES | IO_LIBRARIES,
        "portfolio is pure accounting: no repo packages, no IO libraries",
    ),
    "agents": (
        frozenset({"arena", "dashboard"}),
        "agents must not import the composition root or the dashboard",
    ),
    "markets": (
        frozenset({"arena", "dashboard"}),
        "markets must not import the composition root or the dashboard",
    ),
}
CLOCK_OWNER = "arena/clock.py"
WALL_CLOCK_CALLS = {("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today")}
WALL_CLOCK_CALLS |= {("time", "time"), ("time", "time_ns")}


@dataclass(frozen=True, order=True)
class Violation:
    path: str
    line: int
    what: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what} ({self.rule})"


def python_files(root: Path) -> Iterator[Path]:
    """Every ``.py`` file under ``root``, without descending into virtualenvs, caches or hidden dirs."""
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(
            d
            for d in subdirs
            if d not in SKIPPED_DIRS and not d.startswith(".") and not d.endswith(".egg-info")
        )
        yield from (Path(directory, f) for f in sorted(files) if f.endswith(".py"))


def imports(tree: ast.AST, package: list[str]) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in ``tree``; ``package`` is the file's package path."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            if node.module:
                yield node.lineno, ".".join([*base, node.module])
            else:  # from . import x
                yield from ((node.lineno, ".".join([*base, alias.name])) for alias in node.names)
        elif isinstance(node, ast.Call) and (target := _dynamic_import_target(node)):
            yield node.lineno, target


def _dynamic_import_target(call: ast.Call) -> str | None:
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if name in ("import_module", "__import__") and call.args:
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def wall_clock_reads(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Calls such as ``datetime.now()``, ``datetime.datetime.utcnow()``, ``date.today()``, ``time.time()``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            owner_name = (
                owner.id
                if isinstance(owner, ast.Name)
                else owner.attr
                if isinstance(owner, ast.Attribute)
                else ""
            )
            if (owner_name, node.func.attr) in WALL_CLOCK_CALLS:
                yield node.lineno, f"{owner_name}.{node.func.attr}()"


def check_tree(root: Path) -> list[Violation]:
    """Every boundary violation under ``root`` (a repository checkout), sorted by file and line."""
    found: list[Violation] = []
    for path in python_files(root):
        relative = path.relative_to(root)
        shown = relative.as_posix()
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=shown)
        except SyntaxError as error:
            found.append(Violation(shown, error.lineno or 0, "cannot be parsed", str(error.msg)))
            continue
        package = list(relative.parts[:-1])
        forbidden, rule = FORBIDDEN.get(relative.parts[0], (frozenset(), ""))
        for line, module in imports(tree, package):
            if module.split(".")[0] in forbidden:
                found.append(Violation(shown, line, f"imports {module!r}", rule))
        if shown != CLOCK_OWNER and relative.parts[0] != "tests":
            for line, call in wall_clock_reads(tree):
                found.append(Violation(shown, line, f"reads the wall clock with {call}", "inject a Clock"))
    return sorted(found)


def test_the_repository_keeps_its_boundaries() -> None:
    checked = list(python_files(REPO))
    assert any(p.relative_to(REPO).parts[0] == "portfolio" for p in checked), "found no portfolio sources"
    violations = check_tree(REPO)
    assert not violations, "boundary rules broken:\n" + "\n".join(map(str, violations))


def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_checker_catches_planted_violations(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        {
            "portfolio/__init__.py": "",
            "portfolio/bad.py": (
                "import httpx\n"
                "from decimal import Decimal\n"
                "from sqlalchemy.orm import Session\n"
                "def f():\n"
                "    from arena.clock import SystemClock\n"
                "    return SystemClock\n"
            ),
            "portfolio/sneaky.py": (
                "import importlib\n"
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n"
                "    from markets.types import Market\n"
                "polars = importlib.import_module('polars')\n"
                "from datetime import datetime\n"
                "NOW = datetime.now()\n"
            ),
            "portfolio/fine.py": "from portfolio.money import ZERO\nfrom . import money\nfrom .x import y\n",
            "agents/llm/bad.py": "from ...arena import config\nfrom ..types import Bet\nimport httpx\n",
            "markets/bad.py": "import dashboard.pages\nimport datetime as dt\nx = dt.date.today()\n",
            "arena/free.py": "import streamlit\nimport polars\nfrom agents.types import Bettor\n",
            "arena/clock.py": "from datetime import datetime\ndef now():\n    return datetime.now()\n",
            "tests/test_x.py": "from arena import cli\nimport time\nt = time.time()\n",
            ".venv/lib/site.py": "import arena\n",
        },
    )
    found = [(v.path, v.line, v.what) for v in check_tree(tmp_path)]
    assert found == [
        ("agents/llm/bad.py", 1, "imports 'arena'"),
        ("markets/bad.py", 1, "imports 'dashboard.pages'"),
        ("markets/bad.py", 3, "reads the wall clock with date.today()"),
        ("portfolio/bad.py", 1, "imports 'httpx'"),
        ("portfolio/bad.py", 3, "imports 'sqlalchemy.orm'"),
        ("portfolio/bad.py", 5, "imports 'arena.clock'"),
        ("portfolio/sneaky.py", 4, "imports 'markets.types'"),
        ("portfolio/sneaky.py", 5, "imports 'polars'"),
        ("portfolio/sneaky.py", 7, "reads the wall clock with datetime.now()"),
    ]
    assert str(check_tree(tmp_path)[3]) == (
        "portfolio/bad.py:1: imports 'httpx' "
        "(portfolio is pure accounting: no repo packages, no IO libraries)"
    )


def test_a_file_that_does_not_parse_is_reported_not_skipped(tmp_path: Path) -> None:
    _plant(tmp_path, {"portfolio/broken.py": "def f(:\n"})
    (violation,) = check_tree(tmp_path)
    assert (violation.path, violation.line, violation.what) == ("portfolio/broken.py", 1, "cannot be parsed")
