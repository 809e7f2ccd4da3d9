"""``arena serve --metrics-port``: Prometheus metrics of the live deployment, read from the database.

Every ``arena serve`` and ``arena worker`` writes its work to the shared database, so the metrics
are read from there at each scrape (``prometheus_client``'s custom-collector pattern), not
counted in one process: any serve process, leader or standby, exposes the same numbers, and a
restart loses none. Counters are counts of stored rows (rounds, decisions, provider requests,
job runs); ``arena db prune`` deletes old job runs, which a counter shows as a reset.

A scrape while the database is unreachable answers ``arena_database_up 0`` and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric, SummaryMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import Engine, func
from sqlalchemy import select as sa_select
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, select

from arena.core.clock import Clock, SystemClock
from arena.db.engine import session_scope
from arena.db.models import AgentRow, CohortRow, DecisionRow, JobRunRow, LLMRequestRow, RoundRow, WorkUnitRow
from arena.scheduling.health import Health, check
from arena.scheduling.jobs import LEADERSHIP
from arena.scheduling.runs import FAILED, OK, PARTIAL
from arena.workers import queue
from arena.workers.backoff import is_connection_error

LIVE = (col(CohortRow.mode) == "live",)


class ArenaCollector(Collector):
    """Reads the metrics below from the database at each scrape (see ``METRICS`` in the docs)."""

    def __init__(self, engine: Engine, clock: Clock, leading: Callable[[], bool]) -> None:
        self.engine, self.clock, self.leading = engine, clock, leading

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("arena_database_up", "1 if this process reached the database for this scrape")
        try:
            health = check(self.engine, self.clock.now())
            with session_scope(self.engine, write=False) as session:
                stored = list(_stored(session))
        except DBAPIError as exc:
            if not is_connection_error(exc):
                raise
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from _health(health, self.leading())
        yield from stored


def _health(health: Health, leading: bool) -> Iterator[Metric]:
    now = health.checked_at
    yield _gauge(
        "arena_scheduler_up", "1 if an `arena serve` holds the scheduler lease", health.leader is not None
    )
    yield _gauge("arena_serve_leader", "1 if this process leads the scheduler", leading)
    yield _gauge("arena_serve_standbys", "`arena serve` processes standing by", len(health.standbys))
    lag = GaugeMetricFamily("arena_job_lag_seconds", "How late each job's next run is", labels=["job"])
    last = GaugeMetricFamily(
        "arena_job_last_outcome",
        "1 for the outcome of each job's last finished run",
        labels=["job", "outcome"],
    )
    for job in health.jobs:
        lag.add_metric([job.name], job.lag(now).total_seconds())
        for outcome in (OK, PARTIAL, FAILED):
            last.add_metric([job.name, outcome], 1 if job.outcome == outcome else 0)
    yield lag
    yield last
    workers = GaugeMetricFamily("arena_workers", "`arena worker` processes by state", labels=["state"])
    for state in ("working", "idle", "gone", "stopped"):
        workers.add_metric([state], sum(w.state == state for w in health.workers))
    yield workers
    units = GaugeMetricFamily("arena_work_units", "Units of work by kind and state", labels=["kind", "state"])
    for kind, states in sorted(health.units.items()):
        for state, n in sorted(states.items()):
            units.add_metric([kind, state], n)
    yield units
    problems = GaugeMetricFamily(
        "arena_health_problems", "Problems `arena status` reports, by kind", labels=["kind"]
    )
    for kind in ("scheduler_down", "job_failed", "job_partial", "job_late", "worker_gone", "cohort_stuck"):
        problems.add_metric([kind], sum(p.kind == kind for p in health.problems))
    yield problems


def _stored(session: Session) -> Iterator[Metric]:
    """Counters of stored rows: rounds, decisions and errors, provider requests, job runs, queue lag."""
    rounds = CounterMetricFamily(
        "arena_rounds",
        "Finished rounds of live cohorts by status (done, failed, missed)",
        labels=["cohort", "status"],
    )
    query = (
        select(RoundRow.cohort_id, RoundRow.status, func.count())
        .join(CohortRow, col(CohortRow.id) == col(RoundRow.cohort_id))
        .where(*LIVE, col(RoundRow.status).in_(("done", "failed", "missed")))
        .group_by(col(RoundRow.cohort_id), col(RoundRow.status))
    )
    for cohort, status, n in session.exec(query).all():
        rounds.add_metric([cohort, status], n)
    yield rounds
    errors = CounterMetricFamily(
        "arena_agent_errors", "Decisions of live agents that ended in an error", labels=["cohort", "agent"]
    )
    query = (
        select(DecisionRow.cohort_id, AgentRow.name, func.count())
        .join(AgentRow, col(AgentRow.id) == col(DecisionRow.agent_id))
        .join(CohortRow, col(CohortRow.id) == col(DecisionRow.cohort_id))
        .where(*LIVE, DecisionRow.status == "error")
        .group_by(col(DecisionRow.cohort_id), col(AgentRow.name))
    )
    for cohort, agent, n in session.exec(query).all():
        errors.add_metric([cohort, agent], n)
    yield errors
    yield from _provider(session)
    runs = CounterMetricFamily(
        "arena_job_runs", "Finished job runs kept in job_run, by outcome", labels=["job", "outcome"]
    )
    partial = col(JobRunRow.details_json)["outcome"].as_string() == PARTIAL
    run_counts = (
        sa_select(col(JobRunRow.job), col(JobRunRow.ok), partial, func.count())
        .where(col(JobRunRow.finished_at).is_not(None))
        .group_by(col(JobRunRow.job), col(JobRunRow.ok), partial)
    )
    counted: dict[tuple[str, str], int] = {}
    for job, ok, in_part, n in session.execute(run_counts).all():
        outcome = OK if ok else PARTIAL if in_part else FAILED
        counted[(job, outcome)] = counted.get((job, outcome), 0) + n
    for (job, outcome), n in sorted(counted.items()):
        runs.add_metric([job, outcome], n)
    yield runs
    yield _queue_lag(session)


def _provider(session: Session) -> Iterator[Metric]:
    """Provider requests of live LLM agents: count by outcome, cost, latency (sum and count)."""
    requests = CounterMetricFamily(
        "arena_llm_requests", "Provider requests of live LLM agents", labels=["model", "outcome"]
    )
    cost = CounterMetricFamily(
        "arena_llm_cost_usd", "Provider cost of live LLM agents, in USD", labels=["model"]
    )
    latency = SummaryMetricFamily(
        "arena_llm_latency_seconds", "Provider request latency of live LLM agents", labels=["model"]
    )
    query = (
        sa_select(
            col(AgentRow.model_id),
            col(LLMRequestRow.outcome),
            func.count(),
            func.sum(LLMRequestRow.cost_usd),
            func.sum(LLMRequestRow.latency_s),
        )
        .join(AgentRow, col(AgentRow.id) == col(LLMRequestRow.agent_id))
        .join(CohortRow, col(CohortRow.id) == col(AgentRow.cohort_id))
        .where(*LIVE)
        .group_by(col(AgentRow.model_id), col(LLMRequestRow.outcome))
    )
    by_model: dict[str, list[Any]] = {}
    for model, outcome, n, usd, seconds in session.execute(query).all():
        name = model or "unknown"
        requests.add_metric([name, outcome], n)
        totals = by_model.setdefault(name, [0, 0.0, 0.0])
        totals[0] += n
        totals[1] += float(usd or 0)
        totals[2] += float(seconds or 0)
    for name, (n, usd, seconds) in sorted(by_model.items()):
        cost.add_metric([name], usd)
        latency.add_metric([name], count_value=n, sum_value=seconds)
    yield requests
    yield cost
    yield latency


def _queue_lag(session: Session) -> Metric:
    """How long the oldest queued unit of each kind has waited for a worker."""
    lag = GaugeMetricFamily(
        "arena_unit_queue_lag_seconds", "Wait of the oldest queued unit of each kind", labels=["kind"]
    )
    now = SystemClock().now()
    query = (
        select(WorkUnitRow.kind, func.min(WorkUnitRow.available_at))
        .where(WorkUnitRow.state == queue.QUEUED)
        .group_by(col(WorkUnitRow.kind))
    )
    for kind, oldest in session.exec(query).all():
        lag.add_metric([kind], max(now - oldest, timedelta(0)).total_seconds())
    return lag


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    gauge = GaugeMetricFamily(name, documentation)
    gauge.add_metric([], float(value))
    return gauge


def start_metrics_server(engine: Engine, host: str, port: int) -> None:
    """Serve ``/metrics`` on ``host:port`` in a daemon thread (raises ``OSError`` if taken)."""
    registry = CollectorRegistry()
    registry.register(ArenaCollector(engine, SystemClock(), lambda: LEADERSHIP.fence is not None))
    start_http_server(port, addr=host, registry=registry)
