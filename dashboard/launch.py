"""The dashboard's server process: ``python -m dashboard.launch run dashboard/app.py [flags]``.

It is ``streamlit`` itself (the same command line), with one addition: while Streamlit starts
and the browser loads its frontend, a background thread imports what the pages import (the
scoring package, SQLAlchemy, polars, pyarrow: over a second on this project's machines) and
computes the latest cohort's leaderboard (``dashboard.warmup``), so the first visitor's page
waits for neither. The thread calls nothing of Streamlit's, whose API belongs to the script
threads. Why: docs/design/dashboard-first-page.md.
"""

from __future__ import annotations

import gc
import importlib
import inspect
import threading
import time
from collections.abc import Callable

# The modules the first page imports, heaviest chains first. Those that declare Streamlit caches
# wait for Streamlit's runtime: declared before it exists, each logs a warning to the terminal.
PRELOADED = ("arena.scoring", "arena.reports.catalog", "arena.reports.notes", "pyarrow")
WITH_CACHES = ("dashboard.queries", "dashboard.tables", "dashboard.widgets")
RUNTIME_WAIT_SECONDS = 60


def preload(runtime_ready: Callable[[], bool] | None = None) -> None:
    """Import every module of ``PRELOADED``, then of ``WITH_CACHES`` once ``runtime_ready()``
    (default: Streamlit's runtime exists), or none of those if not within a minute; then warm
    the first page's answers (``dashboard.warmup``). Python's import lock makes a page that
    imports one meanwhile wait for it, not import it twice."""
    if runtime_ready is None:
        from streamlit import runtime

        runtime_ready = runtime.exists
    for name in PRELOADED:
        importlib.import_module(name)
    deadline = time.monotonic() + RUNTIME_WAIT_SECONDS
    while not runtime_ready():
        if time.monotonic() > deadline:
            return
        time.sleep(0.02)
    for name in WITH_CACHES:
        importlib.import_module(name)
    settle()
    from arena.core.settings import Settings
    from dashboard import warmup

    warmup.warm(Settings().db_url)


def settle() -> None:
    """Do now the one-time work that would otherwise fall on the first page's run, for the
    modules imported so far: Streamlit collects garbage after every run (they are kept for the
    life of the server, so they are frozen out of it), and walks the call stack with ``inspect``
    on a page's first element (its file-to-module cache is filled here)."""
    gc.freeze()
    inspect.stack()


def main() -> None:
    """Start the preload, then run Streamlit's command line on this process's arguments."""
    threading.Thread(target=preload, name="dashboard-preload", daemon=True).start()
    from streamlit.web import cli

    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
