"""The dependency rules of docs/architecture.md ("Layers"), checked by parsing every source file.

- ``portfolio/`` is pure accounting: no other package of this repository, and no database,
  network, filesystem, dataframe or UI library.
- ``agents/`` and ``markets/`` never import ``arena`` (the composition root) or ``dashboard``;
  ``agents/`` touches no database either (agents see an ``AgentView``, never storage).
- ``dashboard/`` only reads: it imports no module that writes (the ORM, migrations, the engine,
  upserts...) nor a write construct (``insert``/``update``/``delete``, ``session_scope``), calls
  no ``commit()``/``begin()``/``flush()``, and holds no ``INSERT``/``UPDATE``/``DELETE`` SQL. It
  reads through ``engine.connect()`` and the read models of ``arena.reports``/``arena.scoring``.
- Inside ``arena/``, subpackages form layers (``ARENA_LAYERS``, lowest first): a module imports
  only from its own layer or a lower one, and ``engine/`` and ``scoring/`` are layered inside the
  same way (``SUBLAYERS``). No two modules of ``arena/`` import each other, however indirectly
  (imports under ``TYPE_CHECKING`` included: a cycle of types is still a cycle to read).
- Nothing reads the wall clock (``datetime.now()``, ``date.today()``, any ``time.*`` clock)
  except ``arena/core/clock.py``: time is injected. From ``time`` only the allow-list
  ``TIME_ALLOWED`` may be called: monotonic timers (durations, never a date) and ``sleep``.

Imports are found with ``ast`` wherever they are (module level, inside functions, under
``TYPE_CHECKING``), relative imports are resolved, and ``importlib.import_module("x")`` /
``__import__("x")`` with a literal name count as imports. A failure names file, line and rule.
"""

from __future__ import annotations

import ast
import os
import re
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
DATABASE_LIBRARIES = frozenset({"sqlmodel", "sqlalchemy", "alembic", "psycopg", "psycopg2", "sqlite3"})
IO_LIBRARIES = frozenset(
    {
        *DATABASE_LIBRARIES,
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
        frozenset({"arena", "dashboard"}) | DATABASE_LIBRARIES,
        "agents must not import the composition root, the dashboard or a database library",
    ),
    "markets": (
        frozenset({"arena", "dashboard"}),
        "markets must not import the composition root or the dashboard",
    ),
}
DASHBOARD_READS_ONLY = "the dashboard only reads the database"
DASHBOARD_WRITE_MODULES = frozenset(
    {
        *("sqlmodel", "sqlalchemy.orm", "alembic"),  # ORM sessions and migrations: the writers' tools
        *("arena.db.upsert", "arena.db.market_rows", "arena.migrations"),  # write helpers
        *("arena.engine", "arena.cohorts", "arena.sync", "arena.scheduling", "arena.commands", "arena.cli"),
    }
)
# Pure text the dashboard shows as the CLI prints it (the frozen config as TOML): no database.
DASHBOARD_READ_MODULES = frozenset({"arena.cohorts.export"})
DASHBOARD_WRITE_NAMES = frozenset(
    {
        *("sqlalchemy.insert", "sqlalchemy.update", "sqlalchemy.delete"),
        *("arena.db.engine.session_scope", "arena.db.engine.writer"),
    }
)
SQLALCHEMY_WRITES = frozenset({"insert", "update", "delete"})  # called on a module alias: sa.insert(t)
WRITE_METHODS = frozenset({"commit", "begin", "flush", "add_all"})
WRITE_SQL = re.compile(
    r"^\s*(INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|(CREATE|DROP|ALTER)\s+TABLE|TRUNCATE)\b", re.I
)

CLOCK_OWNER = "arena/core/clock.py"
WALL_CLOCK_CALLS = {("datetime", "now"), ("datetime", "utcnow"), ("datetime", "today"), ("date", "today")}
TIME_ALLOWED = frozenset({"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "sleep"})
"""The ``time`` functions anyone may call: timers that measure durations (never a date), and a wait."""


ARENA_LAYERS = (
    "core",  # clock, settings, config value types, provenance: imports nothing of the arena
    "db",  # tables, engines, units of work, upserts
    "migrations",
    "cohorts",  # configs, launch, the leakage rules
    "scoring",  # pure functions of the stored log
    "corpus",
    "tools",  # research tools, over the corpus and the stored markets
    "sync",  # live venues into the database
    "engine",  # rounds, books, replay and live jobs
    "workers",  # the work queue and the processes that drain it
    "scheduling",  # ``arena serve``: jobs, hand-off to workers, round planning
    "figures",
    "reports",  # read models and cohort reports
    "commands",  # the CLI's command groups
    "cli",
)
"""``arena/``'s subpackages, lowest first: each may import only itself and those before it."""
SUBLAYERS = {
    "engine": ("store", "runtime", "books", "rounds", "replay", "live"),
    "scoring": ("load", "rules", "metrics", "stats", "board"),
}
LAYERS_RULE = "arena's layers: a module imports only its own layer or lower ones (ARENA_LAYERS)"
CYCLE_RULE = "no import cycles inside arena/"


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
            base = _from_module(node, package)
            if node.module:
                yield node.lineno, base
            else:  # from . import x
                yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Call) and (target := _dynamic_import_target(node)):
            yield node.lineno, target


def _from_module(node: ast.ImportFrom, package: list[str]) -> str:
    """The absolute module a ``from ... import`` reads from (relative levels resolved)."""
    base = package[: len(package) - node.level + 1] if node.level else []
    return ".".join([*base, node.module] if node.module else base)


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


def time_reads(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Calls of a ``time`` function outside ``TIME_ALLOWED``, however imported (``import time as t``,
    ``from time import localtime``); an attribute that is merely called ``time`` is not the module."""
    modules, functions = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "time"}
        elif isinstance(node, ast.ImportFrom) and node.module == "time" and not node.level:
            functions |= {a.asname or a.name: a.name for a in node.names}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
            name = func.attr
        elif isinstance(func, ast.Name) and func.id in functions:
            name = functions[func.id]
        else:
            continue
        if name not in TIME_ALLOWED:
            yield node.lineno, f"time.{name}()"


def database_writes(tree: ast.AST, package: list[str]) -> Iterator[tuple[int, str]]:
    """What in a dashboard file could write: write modules or names imported, write calls, write SQL."""
    sqlalchemy_aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            sqlalchemy_aliases |= {a.asname or a.name for a in node.names if a.name == "sqlalchemy"}
        if isinstance(node, ast.ImportFrom):
            module = _from_module(node, package)
            yield from (
                (node.lineno, f"imports {module}.{a.name}")
                for a in node.names
                if f"{module}.{a.name}" in DASHBOARD_WRITE_NAMES
            )
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner, method = node.func.value, node.func.attr
            on_sqlalchemy = isinstance(owner, ast.Name) and owner.id in sqlalchemy_aliases
            if method in WRITE_METHODS or (on_sqlalchemy and method in SQLALCHEMY_WRITES):
                yield node.lineno, f"calls .{method}()"
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "session_scope"
        ):
            yield node.lineno, "calls session_scope()"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and WRITE_SQL.match(node.value):
            yield node.lineno, f"holds write SQL {node.value.strip()[:40]!r}"
    for line, module in imports(tree, package):
        if _writer(module):
            yield line, f"imports {module!r}"


def _writer(module: str) -> bool:
    """A module the dashboard must not import: one of the writers' (``DASHBOARD_WRITE_MODULES``)."""
    if module in DASHBOARD_READ_MODULES:
        return False
    return any(module == m or module.startswith(f"{m}.") for m in DASHBOARD_WRITE_MODULES)


def layer_of(module: str) -> tuple[int, ...] | None:
    """Where an ``arena.*`` module sits: (layer, sublayer) by ``ARENA_LAYERS`` and ``SUBLAYERS``;
    None outside ``arena`` or for the package itself."""
    parts = module.split(".")
    if parts[0] != "arena" or len(parts) < 2 or parts[1] not in ARENA_LAYERS:
        return None
    rank = (ARENA_LAYERS.index(parts[1]),)
    inner = SUBLAYERS.get(parts[1], ())
    return (*rank, inner.index(parts[2])) if len(parts) > 2 and parts[2] in inner else rank


def _upward(importer: tuple[int, ...], imported: tuple[int, ...]) -> bool:
    if imported[0] != importer[0]:
        return imported[0] > importer[0]
    return len(importer) > 1 and len(imported) > 1 and imported[1] > importer[1]


def arena_modules(root: Path) -> dict[str, Path]:
    """Every module of ``root/arena`` by dotted name (a package by its own name)."""
    found = {}
    for path in python_files(root / "arena"):
        parts = list(path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _resolve(module: str, known: dict[str, Path]) -> str | None:
    """The module ``module`` names, or the package holding it (``from pkg import name``)."""
    while module and module not in known:
        module = module.rpartition(".")[0]
    return module or None


def arena_imports(root: Path) -> dict[str, dict[str, int]]:
    """For each ``arena`` module, the ``arena`` modules it imports, with the first line doing so.
    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module, else ``pkg``."""
    known = arena_modules(root)
    graph: dict[str, dict[str, int]] = {}
    for name, path in known.items():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError:
            continue  # reported by check_tree
        edges = graph.setdefault(name, {})
        package = list(path.relative_to(root).parts[:-1])
        for line, module in _imported_modules(tree, package, known):
            if module not in (name, "arena"):
                edges.setdefault(module, line)
    return graph


def _imported_modules(tree: ast.AST, package: list[str], known: dict[str, Path]) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _from_module(node, package)
            names = [f"{base}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for target in filter(None, (_resolve(n, known) for n in names)):
            yield node.lineno, target


def layer_violations(root: Path) -> list[Violation]:
    """Every import in ``arena/`` that points up the layers."""
    found = []
    for importer, edges in arena_imports(root).items():
        here = layer_of(importer)
        for imported, line in edges.items():
            there = layer_of(imported)
            if here is not None and there is not None and _upward(here, there):
                shown = arena_modules(root)[importer].relative_to(root).as_posix()
                found.append(Violation(shown, line, f"imports {imported!r}", LAYERS_RULE))
    return found


def import_cycles(root: Path) -> list[list[str]]:
    """Every set of ``arena`` modules that import each other (strongly connected, size > 1)."""
    graph = arena_imports(root)
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        order[node] = low[node] = len(order)
        stack.append(node)
        for nxt in graph.get(node, {}):
            if nxt not in order:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], order[nxt])
        if low[node] == order[node]:
            members = []
            while not members or members[-1] != node:
                members.append(stack.pop())
            if len(members) > 1:
                cycles.append(sorted(members))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return sorted(cycles)


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
        if relative.parts[0] == "dashboard":
            found += [
                Violation(shown, line, what, DASHBOARD_READS_ONLY)
                for line, what in database_writes(tree, package)
            ]
        if shown != CLOCK_OWNER and relative.parts[0] != "tests":
            for line, call in [*wall_clock_reads(tree), *time_reads(tree)]:
                found.append(Violation(shown, line, f"reads the wall clock with {call}", "inject a Clock"))
    if (root / "arena").is_dir():
        found += layer_violations(root)
        found += [Violation("arena", 0, " <-> ".join(c), CYCLE_RULE) for c in import_cycles(root)]
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
                "    from arena.core.clock import SystemClock\n"
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
            "arena/core/clock.py": "from datetime import datetime\ndef now():\n    return datetime.now()\n",
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
        ("portfolio/bad.py", 5, "imports 'arena.core.clock'"),
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


def test_agents_touch_no_database(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        {
            "agents/store.py": "import sqlmodel\nfrom sqlalchemy.orm import Session\nimport json\n",
            "agents/cache.py": "import sqlite3 as db\nfrom portfolio import Bet\n",
        },
    )
    found = [(v.path, v.line, v.what) for v in check_tree(tmp_path)]
    assert found == [
        ("agents/cache.py", 1, "imports 'sqlite3'"),
        ("agents/store.py", 1, "imports 'sqlmodel'"),
        ("agents/store.py", 2, "imports 'sqlalchemy.orm'"),
    ]


def test_the_dashboard_may_read_but_not_write(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        {
            # What the dashboard really does: a Core connection handed to the read models.
            "dashboard/reads.py": (
                "from sqlalchemy import Engine, select\n"
                "from sqlalchemy.engine import Connection\n"
                "from arena.db.engine import make_engine\n"
                "from arena.reports import catalog\n"
                "def version(url):\n"
                "    with make_engine(url).connect() as connection:\n"
                "        return catalog.data_version(connection)\n"
                "NOTE = 'Update the page to see new rounds; deleted cohorts disappear.'\n"
                "seen = set()\n"
                "seen.add(1)\n"
                "options = {}\n"
                "options.update(a=1)\n"
            ),
            "dashboard/writes.py": (
                "from arena.db.upsert import upsert\n"
                "from arena.db.engine import make_engine, session_scope\n"
                "from sqlalchemy import insert, text\n"
                "import sqlalchemy as sa\n"
                "from arena.engine.books.resolving import override\n"
                "def f(engine, table):\n"
                "    with session_scope(engine) as session:\n"
                "        session.add_all([])\n"
                "    with engine.begin() as connection:\n"
                "        connection.execute(sa.delete(table))\n"
                "        connection.execute(text('DELETE FROM fill'))\n"
                "        connection.commit()\n"
            ),
            "dashboard/pages/orm.py": "from sqlmodel import Session\n",
        },
    )
    found = [(v.path, v.line, v.what, v.rule) for v in check_tree(tmp_path)]
    assert [(path, line, what) for path, line, what, _ in found] == [
        ("dashboard/pages/orm.py", 1, "imports 'sqlmodel'"),
        ("dashboard/writes.py", 1, "imports 'arena.db.upsert'"),
        ("dashboard/writes.py", 2, "imports arena.db.engine.session_scope"),
        ("dashboard/writes.py", 3, "imports sqlalchemy.insert"),
        ("dashboard/writes.py", 5, "imports 'arena.engine.books.resolving'"),
        ("dashboard/writes.py", 7, "calls session_scope()"),
        ("dashboard/writes.py", 8, "calls .add_all()"),
        ("dashboard/writes.py", 9, "calls .begin()"),
        ("dashboard/writes.py", 10, "calls .delete()"),
        ("dashboard/writes.py", 11, "holds write SQL 'DELETE FROM fill'"),
        ("dashboard/writes.py", 12, "calls .commit()"),
    ]
    assert {rule for *_, rule in found} == {DASHBOARD_READS_ONLY}


def test_time_is_read_only_through_the_allowed_timers(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        {
            "arena/timing.py": (
                "import time\n"
                "import time as t\n"
                "from time import localtime, perf_counter as pc\n"
                "started = time.perf_counter()\n"
                "deadline = t.monotonic_ns() + 5\n"
                "time.sleep(0.1)\n"
                "elapsed = pc() - started\n"
                "stamp = t.time()\n"
                "when = localtime()\n"
                "cpu = time.process_time()\n"
                "def f(bet):\n"
                "    return bet.time.astimezone()\n"
            ),
        },
    )
    found = [(v.line, v.what) for v in check_tree(tmp_path)]
    assert found == [
        (8, "reads the wall clock with time.time()"),
        (9, "reads the wall clock with time.localtime()"),
        (10, "reads the wall clock with time.process_time()"),
    ]


def test_arena_layers_point_down_and_never_cycle(tmp_path: Path) -> None:
    _plant(
        tmp_path,
        {
            "arena/__init__.py": "",
            "arena/core/__init__.py": "",
            "arena/core/clock.py": "",
            "arena/db/__init__.py": "",
            "arena/db/engine.py": "from arena.core import clock\nfrom arena.engine.rounds import run\n",
            "arena/engine/__init__.py": "",
            "arena/engine/rounds/__init__.py": "",
            "arena/engine/rounds/run.py": (
                "from arena.engine.store.claims import claim\nfrom arena.db import engine\n"
            ),
            "arena/engine/store/__init__.py": "",
            "arena/engine/store/claims.py": "from ..rounds import run\nclaim = 1\n",
            "arena/workers/__init__.py": "",
            "arena/workers/a.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from arena.workers import b\n"
            ),
            "arena/workers/b.py": "import arena.workers.a\nimport arena.engine.rounds.run\n",
        },
    )
    found = [(v.path, v.line, v.what, v.rule) for v in check_tree(tmp_path)]
    assert [(path, line, what) for path, line, what, _ in found] == [
        ("arena", 0, "arena.db.engine <-> arena.engine.rounds.run <-> arena.engine.store.claims"),
        ("arena", 0, "arena.workers.a <-> arena.workers.b"),
        ("arena/db/engine.py", 2, "imports 'arena.engine.rounds.run'"),
        ("arena/engine/store/claims.py", 1, "imports 'arena.engine.rounds.run'"),
    ]


def test_layers_name_every_subpackage_of_arena() -> None:
    packages = {p.name for p in (REPO / "arena").iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in (REPO / "arena").glob("*.py") if p.stem != "__init__"}
    assert packages | modules == set(ARENA_LAYERS)
    for parent, inner in SUBLAYERS.items():
        assert {p.name for p in (REPO / "arena" / parent).iterdir() if (p / "__init__.py").exists()} == set(
            inner
        )
        assert [p.stem for p in (REPO / "arena" / parent).glob("*.py")] == ["__init__"], (
            f"loose module in {parent}"
        )
