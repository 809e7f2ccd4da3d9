"""The README's dashboard screenshot: the demo cohort's leaderboard in headless Chromium, 1400 px wide.

    python scripts/screenshot.py                      # runs `arena demo` into a temporary database
    python scripts/screenshot.py --database-url URL   # or shows a database you already have

It drives what a user runs (``arena demo``, then ``arena dashboard`` through
``dashboard.serving``) and writes ``docs/images/dashboard.png`` (``--out`` to change). Any
failure (the demo, the server, a page that does not settle) exits non-zero with one line.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from dashboard.serving import ARGS, CHROMIUM, ROOT, dashboard, settled

WIDTH, HEIGHT = 1400, 1600  # the window; the picture ends under the leaderboard table
OUT = ROOT / "docs" / "images" / "dashboard.png"
LOAD_MS = 60_000


def demo_database(directory: Path) -> str:
    """Run the demo cohort (baselines on the bundled dataset) into a fresh SQLite file."""
    url = f"sqlite:///{directory / 'demo.db'}"
    command = [sys.executable, "-m", "arena.cli", "demo", "--no-report", "--database-url", url]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"screenshot: `arena demo` failed ({result.returncode}): {result.stderr[-2000:]}")
    return url


def capture(database_url: str, out: Path) -> None:
    """Open the leaderboard, wait for its table, and save the page down to the table's end."""
    from playwright.sync_api import sync_playwright

    out.parent.mkdir(parents=True, exist_ok=True)
    with dashboard(database_url) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(base)
        page.wait_for_selector("h1:has-text('Leaderboard')", timeout=LOAD_MS)
        page.wait_for_function(settled(0), timeout=LOAD_MS)
        page.wait_for_timeout(1_500)  # the grid draws its canvas
        table = page.locator("[data-testid=stDataFrame]").first.bounding_box()
        if table is None:
            raise SystemExit("screenshot: the leaderboard shows no table")
        bottom = min(HEIGHT, table["y"] + table["height"] + 12)
        page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": WIDTH, "height": bottom})
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="show this database instead of a fresh demo cohort")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to write the PNG (default {OUT})")
    args = parser.parse_args()
    if not CHROMIUM.exists():
        raise SystemExit(f"screenshot: needs Debian chromium at {CHROMIUM} (make browser-deps)")
    with tempfile.TemporaryDirectory(prefix="arena-screenshot-") as scratch:
        capture(args.database_url or demo_database(Path(scratch)), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
