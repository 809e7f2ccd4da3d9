"""Run (or resume) a replay cohort in its own process, with a 1-second claim lease.

Used by the crash-safety test, which kills this process with SIGKILL at random moments:
``python -m tests.engine.crash_runner DB_URL COHORT_ID DATASET``.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from arena.db.engine import make_engine
from arena.engine.replay.runner import ReplayRunner
from arena.engine.runtime.cohort import load_runtime
from markets.replay import ReplaySource


def main(db_url: str, cohort_id: str, dataset: str) -> int:
    engine = make_engine(db_url)
    rt = load_runtime(engine, cohort_id, source=ReplaySource.from_directory(dataset), environ={})
    rt.lease = timedelta(seconds=1)
    result = asyncio.run(ReplayRunner(rt).run())
    return 0 if result.completed else 3


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
