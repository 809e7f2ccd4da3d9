"""`arena demo`: the baselines on the bundled dataset, offline, from launch to leaderboard and report.

An LLM agent joins when OPENROUTER_API_KEY or ``--llm-base-url`` is given (``--with-mock-llm``: a
seeded one, in process); ``--fresh`` starts from an empty local SQLite database. The run itself
is ``arena replay``'s (``arena.commands.run``), exit codes included.
"""

from __future__ import annotations

import os
import re
import sqlite3
import tomllib
from contextlib import closing
from pathlib import Path
from typing import Annotated, Any

import typer
from sqlalchemy import Engine

from arena.cohorts.config import ConfigError, parse_config
from arena.commands.leaderboard_table import WideOption
from arena.commands.options import DatabaseOption, fail, launching
from arena.commands.run import AllowFailures, console, exit_if_failed, finish_run, launch_cohort, run_to_end
from arena.core.clock import SystemClock
from arena.core.settings import Settings
from arena.engine.runtime.sources import open_source
from markets.replay.load import BUNDLED_DATASET_DIR

DEMO_CONFIG = Path(__file__).resolve().parents[2] / "data" / "configs" / "demo-baselines.toml"
DEMO_LLM_MODEL = "openai/gpt-4o-mini"
DEMO_LLM_CUTOFF = "2023-10-01"  # its published training cutoff


def register(app: typer.Typer) -> None:
    """Add ``arena demo`` to ``app``."""
    app.command("demo")(demo_command)


def demo_command(
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start from an empty local SQLite database.")
    ] = False,
    llm_base_url: Annotated[
        str | None, typer.Option(help="Add an LLM agent served at this OpenAI-compatible URL.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model id for the LLM agent.")] = None,
    knowledge_cutoff: Annotated[
        str | None,
        typer.Option(
            help="The LLM's training cutoff (YYYY-MM-DD): markets closing on or before that day "
            "(resolving, without a close time) are left out."
        ),
    ] = None,
    with_mock_llm: Annotated[
        bool,
        typer.Option(
            "--with-mock-llm",
            help="Add a mock LLM agent (in-process, seeded, tools on): an LLM cohort with no key, no server.",
        ),
    ] = False,
    report: Annotated[bool, typer.Option("--report/--no-report", help="Write the cohort's report.")] = True,
    allow_agent_failures: AllowFailures = False,
    wide: WideOption = False,
    database_url: DatabaseOption = None,
) -> None:
    """The baselines (and an LLM when OPENROUTER_API_KEY or --llm-base-url is given) on the bundled
    dataset, offline: launch, replay to the end, print the leaderboard, write the report."""
    url = database_url or Settings().db_url
    if fresh:
        _remove_sqlite(url)
    with launching(url) as engine:
        _import_demo_corpus(engine)
        try:
            data = _demo_config(llm_base_url, model, knowledge_cutoff)
            config = parse_config(_with_mock_llm(data) if with_mock_llm else data, source=str(DEMO_CONFIG))
            source = open_source(config, engine)
            cohort_id = launch_cohort(engine, config, source)
        except ConfigError as exc:
            fail(str(exc))
    result = run_to_end(engine, cohort_id, source=source)
    del source  # replayed: scoring and the report need not keep the dataset in memory
    failed = finish_run(engine, result, wide=wide)
    if report:  # written even when an agent failed: the report is where a failure is studied
        _write_report(engine, cohort_id)
    console.print("\nOpen the dashboard with [bold]arena dashboard[/] to explore the cohort.")
    exit_if_failed(failed, cohort_id, allow=allow_agent_failures)


def _import_demo_corpus(engine: Engine) -> None:
    """Import the bundled markets' texts as corpus ``forecastbench-markets``, once per database.

    A cohort with ``[tools] corpus`` (data/configs/researcher.toml) can then search right after
    the demo."""
    from arena.corpus.documents import CorpusError
    from arena.corpus.market_texts import BUNDLED_CORPUS, CORPUS_FILE
    from arena.corpus.store import import_if_absent

    try:
        info, imported = import_if_absent(engine, BUNDLED_DATASET_DIR / CORPUS_FILE, BUNDLED_CORPUS)
    except (CorpusError, OSError) as exc:
        fail(f"importing the bundled corpus: {exc}", code=1)
    done = "imported" if imported else "already imported"
    console.print(f"Corpus [bold]{info.name}[/]: {info.documents:,} market texts ({done})")


def _write_report(engine: Engine, cohort_id: str) -> None:
    """The cohort's report folder (HTML, Markdown, tables) under ``$ARENA_HOME/reports``."""
    from arena.reports.bundle import build_report
    from arena.reports.content import ReportError
    from markets.placement import PlacementRefused

    out = Settings().home / "reports" / cohort_id
    try:
        report = build_report(
            engine, cohort_id, out, clock=SystemClock(), environ=os.environ, make_zip=False, replace=True
        )
    except (ReportError, PlacementRefused, OSError) as exc:
        fail(f"writing the report: {exc}", code=1)
    console.print(f"Report written to {report.folder} (open report.html; `arena report` for more).")


def agent_name_for(model: str) -> str:
    """An agent name from a model id, so the leaderboard says which model it was.

    The id's last path part (``openai/gpt-4o-mini`` → ``gpt-4o-mini``) in the characters agent
    names allow."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", model.rsplit("/", 1)[-1]).strip("-._")[:64]
    return name or "llm"


def _demo_config(llm_base_url: str | None, model: str | None, cutoff: str | None) -> dict[str, Any]:
    """The example config, plus an LLM agent if a key or a local server is available."""
    data = tomllib.loads(DEMO_CONFIG.read_text(encoding="utf-8"))
    llm: dict[str, Any] = {"kind": "llm"}
    if llm_base_url is not None:
        llm |= {"model": model or "local-model", "base_url": llm_base_url}
    elif os.environ.get("OPENROUTER_API_KEY"):
        llm |= {"model": model or DEMO_LLM_MODEL, "knowledge_cutoff": DEMO_LLM_CUTOFF}
    else:
        return data
    llm["name"] = agent_name_for(llm["model"])
    if cutoff is not None:
        llm["knowledge_cutoff"] = cutoff
    data["agents"].append(llm)
    return data


MOCK_LLM_AGENT = {
    "name": "mock-llm",
    "kind": "llm",
    "provider": "mock",
    "model": "seeded",
    "prompt_version": "v2",
    "tools": {"enabled": True, "max_calls": 2},
    "mock": {"tool_calls": 2},
}


def _with_mock_llm(data: dict[str, Any]) -> dict[str, Any]:
    """The demo config with the mock LLM agent, researching the bundled markets' texts."""
    from arena.corpus.market_texts import BUNDLED_CORPUS

    return {**data, "tools": {"corpus": BUNDLED_CORPUS}, "agents": [*data["agents"], MOCK_LLM_AGENT]}


def _remove_sqlite(url: str) -> None:
    """``--fresh``: delete the SQLite database, only if it is an arena database.

    Any file named by mistake (``--database-url sqlite:///notes.db``) stays."""
    if not url.startswith("sqlite:///"):
        fail("--fresh only resets the local SQLite database; use a new ARENA_DATABASE_URL for other servers")
    path = Path(url.removeprefix("sqlite:///"))
    if path.is_symlink() or (path.exists() and not _holds_arena_schema(path)):
        fail(f"--fresh deletes only an arena database, and {path} is not one; nothing was deleted")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _holds_arena_schema(path: Path) -> bool:
    """``path`` is a SQLite file with the arena's schema-revision table (read only, never created)."""
    query = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alembic_version'"
    try:
        with closing(sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True)) as connection:
            return connection.execute(query).fetchone() is not None
    except sqlite3.Error:  # not a SQLite file at all
        return False
