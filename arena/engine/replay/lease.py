"""One ``arena replay`` per cohort at a time: the ``replay:<cohort id>`` lease in the database.

Two processes replaying one cohort would each build ledgers the other moves under them (the
second died with a ``LedgerConflict`` traceback). The first takes the lease and renews it from a
background thread while it runs; a second is refused at once with a message naming the holder's
host and pid. A holder that died on this host is taken over at once (its pid is gone); one on
another host, after the lease expires. Lease times are wall-clock: they are about processes being
alive, which a replay's simulated time knows nothing about.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from sqlalchemy import Engine

from arena.core.clock import Clock
from arena.db import leases
from arena.engine.store.claims import new_token, owner_is_dead

log = logging.getLogger(__name__)

RUN_LEASE_TTL = timedelta(seconds=60)


class CohortBusy(RuntimeError):
    """Another live process is replaying this cohort."""


def lease_name(cohort_id: str) -> str:
    return f"replay:{cohort_id}"


def describe_owner(owner: str) -> str:
    """``host:pid:token`` as ``pid N on host H`` (the token means nothing to a reader)."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return f"pid {pid} on host {host}" if pid.isdigit() else owner


@contextmanager
def replay_lease(
    engine: Engine, cohort_id: str, clock: Clock, ttl: timedelta = RUN_LEASE_TTL
) -> Iterator[str]:
    """Hold the cohort's replay lease for the duration of the block (yields our owner token).

    ``ttl``: how long a holder that stopped renewing keeps the cohort; ``arena worker`` passes its
    unit lease so a cohort frees up when the unit does."""
    name, owner = lease_name(cohort_id), new_token()
    if not leases.try_acquire(engine, owner, clock.now(), ttl, name=name):
        held = leases.holder(engine, name=name)
        dead = held is not None and owner_is_dead(held.owner)
        if held is None or not (
            dead and leases.take_over(engine, held.owner, owner, clock.now(), ttl, name=name)
        ):
            who = describe_owner(held.owner) if held else "another process"
            raise CohortBusy(
                f"cohort {cohort_id} is being replayed by {who}; wait for it to finish or stop it"
            )
    stop = threading.Event()
    renewer = threading.Thread(
        target=_renew, args=(engine, owner, name, clock, ttl, stop), name=f"lease {name}", daemon=True
    )
    renewer.start()
    try:
        yield owner
    finally:
        stop.set()
        renewer.join()
        leases.release(engine, owner, name=name)


def _renew(
    engine: Engine, owner: str, name: str, clock: Clock, ttl: timedelta, stop: threading.Event
) -> None:
    while not stop.wait((ttl / 4).total_seconds()):
        try:
            held = leases.try_acquire(engine, owner, clock.now(), ttl, name=name)
        except Exception:  # a database blip: the next renewal retries well within the TTL
            log.exception("renewing %s failed", name)
            continue
        if not held:  # paused past the TTL and taken over: the claim fences keep the ledgers safe
            log.error("lost %s to another process; its claims fence this run's remaining decisions", name)
            return
