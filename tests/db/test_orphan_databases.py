"""The test suite drops only test databases whose owner is provably gone (``tests/db_owner.py``).

On a PostgreSQL server shared by several machines or checkouts, a pid missing from this
machine's process table proves nothing about a database another machine made: it is kept.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import Connection

from arena.db.engine import normalize_url
from tests import db_owner
from tests.conftest import POSTGRES_URL


@pytest.fixture
def me() -> dict[str, Any]:
    owner = db_owner.this_owner()
    if owner is None:
        pytest.skip("no /proc here: no owner can be proved, so nothing is ever dropped")
    return owner


@pytest.fixture
def dead(me: dict[str, Any]) -> dict[str, Any]:
    """An owner on this machine whose process has ended: a child that started and exited."""
    script = "import os, sys; print(os.getpid(), flush=True); sys.stdin.read()"
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    pid = int(child.stdout.readline())
    start = db_owner.started(pid)
    child.communicate("")
    return {**me, "pid": pid, "start": start}


def test_only_a_gone_owner_on_this_machine_and_boot_is_gone(me: dict[str, Any], dead: dict[str, Any]) -> None:
    def gone(owner: dict[str, Any] | str | None) -> bool:
        comment = db_owner.MARK + json.dumps(owner) if isinstance(owner, dict) else owner
        return db_owner.owner_gone(comment, me)

    assert gone(dead)
    assert gone({**me, "start": me["start"] + 1})  # the pid lives, but it is another process now
    assert not gone(me)  # alive
    assert not gone({**dead, "boot": "another-boot"})  # another machine, or before a reboot
    assert not gone({**dead, "pidns": "pid:[1]"})  # another container on this kernel
    assert not gone({**dead, "pid": str(dead["pid"])})
    assert not gone(None) and not gone("") and not gone("made by hand") and not gone(db_owner.MARK + "{")


@pytest.fixture
def admin() -> Iterator[Connection]:
    if os.environ.get("ARENA_SKIP_POSTGRES") == "1":
        pytest.skip("ARENA_SKIP_POSTGRES=1")
    engine = create_engine(normalize_url(POSTGRES_URL), isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        yield connection
    engine.dispose()


@pytest.mark.postgres
def test_drop_orphans_drops_only_what_is_provably_orphaned(
    admin: Connection, me: dict[str, Any], dead: dict[str, Any]
) -> None:
    tag = secrets.token_hex(3)
    owners: dict[str, dict[str, Any] | None] = {
        f"{db_owner.PREFIX}{dead['pid']}_{tag}_gone": dead,
        f"{db_owner.PREFIX}{dead['pid']}_{tag}_elsewhere": {**dead, "boot": "another-machine"},
        f"{db_owner.PREFIX}{dead['pid']}_{tag}_unmarked": None,  # an older checkout's: no comment
        f"{db_owner.PREFIX}{os.getpid()}_{tag}_alive": me,
    }
    try:
        for name, owner in owners.items():
            admin.exec_driver_sql(f'CREATE DATABASE "{name}"')
            db_owner.mark(admin, name, owner)
        dropped = db_owner.drop_orphans(admin)
        left = set(admin.execute(text("SELECT datname FROM pg_database")).scalars())
    finally:
        for name in owners:
            admin.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    ours = [name for name in dropped if tag in name]
    assert ours == [f"{db_owner.PREFIX}{dead['pid']}_{tag}_gone"]
    assert {name for name in owners if not name.endswith("_gone")} <= left
