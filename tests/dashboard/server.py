"""The browser tests' side of ``dashboard.serving``: skip or fail when Chromium is missing.

The server itself (``arena dashboard`` on a free loopback port) lives in ``dashboard.serving``,
shared with ``scripts/screenshot.py``; it is re-exported here for the browser tests.
"""

from __future__ import annotations

import os

import pytest

from dashboard.serving import ARGS, CHROMIUM, ROOT, dashboard, settled

__all__ = ["ARGS", "CHROMIUM", "ROOT", "dashboard", "require_chromium", "settled"]
BROWSER_MISSING = "needs Debian chromium at /usr/bin/chromium (make browser-deps)"


def require_chromium() -> list[pytest.MarkDecorator]:
    """Marks for a browser test module: skipped on a developer's machine without chromium; under
    ``CI=true`` a missing browser fails the collection instead (CI must run these tests)."""
    if os.environ.get("CI") == "true" and not CHROMIUM.exists():
        pytest.fail(f"CI=true and the browser test {BROWSER_MISSING}", pytrace=False)
    return [pytest.mark.browser, pytest.mark.skipif(not CHROMIUM.exists(), reason=BROWSER_MISSING)]
