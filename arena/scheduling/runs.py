"""Running one job once: claim its time bucket, run the body, record the outcome in ``job_run``.

The bucket claim (unique job + bucket) is what makes a job run at most once per period even if
two processes fire it: the loser sees the claim and skips. Failures are recorded, logged and
re-raised as ``JobFailed`` so the caller and ``arena status`` both see them. A
``FenceLost`` (the engine is fenced by a lease this process no longer holds) is not a failure to
record: nothing may be written any more, so it passes straight up to the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Engine, update

from arena.core.clock import Clock
from arena.core.summary import idle_of, warnings_of
from arena.db.engine import session_scope
from arena.db.leases import FenceLost
from arena.db.models import JobRunRow
from arena.db.upsert import insert_ignore

log = logging.getLogger("arena.jobs")

JobBody = Callable[[Engine, Clock], str]

# A run's outcome as ``arena status`` shows it: ``job_run.ok``, refined by ``details_json``.
OK, PARTIAL, FAILED = "ok", "partial", "failed"


class JobFailed(RuntimeError):
    """A job body raised; the message is the one-line reason stored in ``job_run``."""


@dataclass(frozen=True, slots=True)
class JobSpec:
    """A named periodic job: ``body`` returns a one-line summary or raises on failure."""

    name: str
    every: timedelta
    body: JobBody
    help: str


def bucket_of(when: datetime, every: timedelta) -> datetime:
    """The start of the period containing ``when`` (periods aligned on the Unix epoch)."""
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    return epoch + ((when - epoch) // every) * every


def run_once(spec: JobSpec, engine: Engine, clock: Clock) -> bool:
    """Run ``spec`` for the current bucket unless another runner already claimed it.

    Returns False when skipped. Raises ``JobFailed`` (after recording it) when the body fails. A
    body whose summary carries warnings (``arena.core.summary``) did its work in part: recorded
    as not ok, with outcome ``partial`` and the warnings in ``details_json``, and logged once.
    """
    started = clock.now()
    bucket = bucket_of(started, spec.every)
    with session_scope(engine) as session:
        claimed = insert_ignore(
            session,
            JobRunRow,
            [{"job": spec.name, "bucket": bucket, "started_at": started}],
            on=("job", "bucket"),
        )
    if not claimed:
        log.debug(
            "job %s: bucket %s already claimed by another runner; skipped", spec.name, bucket.isoformat()
        )
        return False
    try:
        message = spec.body(engine, clock)
    except FenceLost:
        raise
    except Exception as exc:  # recorded and re-raised: a failed job must never look like success
        _finish(engine, spec.name, bucket, clock.now(), f"{type(exc).__name__}: {exc}", FAILED)
        log.error("job %s failed: %s: %s", spec.name, type(exc).__name__, exc)
        raise JobFailed(f"{spec.name}: {type(exc).__name__}: {exc}") from exc
    warnings = warnings_of(message)
    _finish(engine, spec.name, bucket, clock.now(), message, PARTIAL if warnings else OK, warnings)
    if warnings:
        log.warning("job %s partly failed: %s; %s", spec.name, message, "; ".join(warnings))
    else:
        log.log(logging.DEBUG if idle_of(message) else logging.INFO, "job %s: %s", spec.name, message)
    return True


def _finish(
    engine: Engine,
    job: str,
    bucket: datetime,
    at: datetime,
    message: str,
    outcome: str,
    warnings: tuple[str, ...] = (),
) -> None:
    details = {"outcome": outcome, "warnings": [w[:1000] for w in warnings[:20]]} if warnings else None
    with session_scope(engine) as session:
        session.execute(
            update(JobRunRow)
            .where(JobRunRow.job == job, JobRunRow.bucket == bucket)  # type: ignore[arg-type]
            .values(finished_at=at, ok=outcome == OK, message=str(message)[:2000], details_json=details)
        )
