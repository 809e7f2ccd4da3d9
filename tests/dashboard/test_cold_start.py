"""A dashboard page must not pull in pandas: its import alone takes most of a second on a cold
dashboard (the leaderboard's budget is 2 s on a million marks). Streamlit converts any table
that is not Arrow through pandas, so one stray ``st.dataframe(polars_frame)`` would bring it back."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.dashboard.world import REPLAY

REPO = Path(__file__).resolve().parents[2]
SCRIPT = f"""
import sys
from tests.dashboard.conftest import run_page
for page in ("leaderboard", "cohort", "agent", "markets", "calibration"):
    app = run_page(page, cohort={REPLAY!r})
    assert not app.exception, (page, [e.value for e in app.exception])
    assert len(app.dataframe) > 0, page  # the pages did show tables
    print(page, "pandas" in sys.modules)
"""


def test_no_page_imports_pandas(world_url: str) -> None:
    env = os.environ | {"ARENA_DATABASE_URL": world_url, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    pages = [line.split() for line in result.stdout.splitlines()]
    assert pages == [[p, "False"] for p in ("leaderboard", "cohort", "agent", "markets", "calibration")]
