"""Which code produced a result: the package version, the checkout's commit and whether it had
local changes.

Cohorts record it when launched and reports put it in their manifest, so a published number can
be traced back to the exact code (and flagged when that code was modified).
"""

from __future__ import annotations

import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

CHECKOUT = Path(__file__).resolve().parent.parent
PACKAGE = "bettor-arena"


def package_version() -> str | None:
    """The installed distribution's version; None when running from a tree that was never installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return None


def git_revision(root: Path = CHECKOUT) -> dict[str, Any] | None:
    """Commit and dirty flag of the checkout the code runs from; None when not in a git checkout."""
    try:
        top = _git(root, "rev-parse", "--show-toplevel")
        if Path(top).resolve() != root.resolve():
            return None  # installed inside some other repository: not our commit
        commit = _git(root, "rev-parse", "HEAD")
        dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit, "dirty": dirty}


@cache
def git_commit_label(root: Path = CHECKOUT) -> str | None:
    """The commit as one string, ``-dirty`` appended when the checkout had local changes (looked up
    once per process: every cohort a process launches runs the same code)."""
    revision = git_revision(root)
    if revision is None:
        return None
    return str(revision["commit"]) + ("-dirty" if revision["dirty"] else "")


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True)
    return done.stdout.strip()
