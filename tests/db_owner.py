"""Which test session owns a test database on the shared PostgreSQL server, and whether it is gone.

Each session's database carries a comment naming its owner: the kernel's boot id, the process-id
namespace, the pid and that process's start time (``/proc/PID/stat``), and the host name for a
reader. A database is an orphan only when its owner is provably gone: same boot and same pid
namespace as this process (so this process table is the owner's), and that pid is gone or now
belongs to a process started at another time (the pid was reused). A database without such a
comment, from another machine or container, or from before a reboot is never dropped: another
checkout on another machine may be using it, and no local process table can say otherwise.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

PREFIX = "arena_test_"
MARK = "arena-test-owner "


def this_owner() -> dict[str, Any] | None:
    """This process as a database owner; None where ``/proc`` does not say (not Linux)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    pid = os.getpid()
    return {"host": socket.gethostname(), "boot": boot, "pidns": namespace, "pid": pid, "start": started(pid)}


def started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot), or None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22; the name in () may hold spaces


def mark(connection: Connection, database: str, owner: dict[str, Any] | None) -> None:
    """Record ``owner`` on ``database`` (nothing when there is no owner to prove)."""
    if owner is not None:
        # A literal (COMMENT takes no parameters): quotes doubled, and % doubled for psycopg.
        comment = (MARK + json.dumps(owner, sort_keys=True)).replace("'", "''").replace("%", "%%")
        connection.exec_driver_sql(f"COMMENT ON DATABASE \"{database}\" IS '{comment}'")


def owner_gone(comment: str | None, me: dict[str, Any] | None) -> bool:
    """The database's owner (its ``comment``) is provably gone, seen from ``me``: see the module."""
    if me is None or not comment or not comment.startswith(MARK):
        return False
    try:
        owner = json.loads(comment.removeprefix(MARK))
    except ValueError:
        return False
    if not isinstance(owner, dict) or (owner.get("boot"), owner.get("pidns")) != (me["boot"], me["pidns"]):
        return False
    pid, start = owner.get("pid"), owner.get("start")
    if not isinstance(pid, int) or not isinstance(start, int):
        return False
    return started(pid) != start


def drop_orphans(connection: Connection) -> list[str]:
    """Drop the test databases whose owner is provably gone; returns their names."""
    query = text(
        "SELECT datname, shobj_description(oid, 'pg_database') FROM pg_database "
        "WHERE starts_with(datname, :prefix)"
    )
    rows = connection.execute(query, {"prefix": PREFIX}).all()
    me = this_owner()
    dropped = [name for name, comment in rows if owner_gone(comment, me)]
    for name in dropped:
        connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return dropped
