"""Failures that end any command with one line instead of a traceback.

Two things can go wrong under any command, whatever it was doing: the SQLite file it opened is
deleted or replaced (``arena.db.engine.DatabaseGone``), or the disk fills up (SQLite's
"database or disk is full", PostgreSQL's "No space left on device", an ``ENOSPC`` from a file
write). Both leave the database as it was after its last commit, since every unit of work is one
transaction; the command says so in one line and exits 1. Cheap to import: the CLI imports it
only when a command raised.
"""

from __future__ import annotations

import errno
import sys

DISK_FULL_MARKERS = ("database or disk is full", "No space left on device")


def explained(exc: BaseException) -> str | None:
    """The one line that ends the command for ``exc``, or None when ``exc`` is not one of these."""
    engine = sys.modules.get("arena.db.engine")  # DatabaseGone can only come from it, once imported
    if engine is not None and isinstance(exc, engine.DatabaseGone):
        return str(exc)
    if _disk_full(exc):
        return (
            "the disk is full: what was stored before is kept whole, nothing half-written; free some "
            "space and run the command again (a replay resumes where it stopped)"
        )
    return None


def _disk_full(exc: BaseException | None) -> bool:
    """``exc``, or an error it was raised from (a driver's, wrapped by SQLAlchemy), is a full disk."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        if any(marker in str(exc) for marker in DISK_FULL_MARKERS):
            return True
        exc = getattr(exc, "orig", None) or exc.__cause__ or exc.__context__
    return False
