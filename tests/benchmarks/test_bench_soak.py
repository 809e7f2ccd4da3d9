"""A soak of live operation: ``arena serve`` and two ``arena worker`` processes on PostgreSQL for
``ARENA_SOAK_MINUTES`` of wall time (default 30) under scripted faults.

Real processes, started as a user starts them, on a database this benchmark creates and drops:
``arena markets sync``, ``arena cohort launch`` of three live cohorts (a round every 1, 2 and 3
minutes; baselines and two LLM agents each, on the loopback OpenAI-compatible fake), then ``arena
serve --metrics-port`` and the workers, all reaching PostgreSQL through a loopback TCP proxy. The
venue is the loopback Polymarket fake. The script (offsets scale with the duration): prices move
every minute; the venue answers 503 to everything for a spell, and later stalls every answer past
the client's 15 s timeout for another; a held market resolves three times; the proxy cuts every
connection to PostgreSQL twice, each time for ``CUT_S``, longer than the leader's and the
workers' leases. The 1-minute cohort's ``catch_up_grace`` is shorter than a cut, so rounds due
during a cut are recorded as missed there; the other cohorts catch them up.

Asserted: no round or decision runs twice (one round row per round, one decision per agent per
round asked or missed), every round due is done, empty or missed, and a round is not run only
when due during a cut (or just around it); ``arena cohort reconcile`` passes for
each cohort; every process is still running at the end and stops cleanly.

Recorded: per cohort rounds run against rounds due (ratio to 1.0) and rounds missed; work units
and their attempts (takeovers); agent errors; database growth per day at these cadences (the
size from ``pg_database_size`` after the launch and at the end, scaled from the run's length to
a day); per process the peak RSS (``VmHWM``) and the mean RSS of the last quarter of the run
against the first quarter; the LLM requests the provider answered against those the database
stores (a decision's requests, and the charges of attempts cut short); the exit code and problems
of ``arena status --json`` at the end.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from sqlalchemy import URL, Engine, text
from sqlmodel import Session, select

from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import (
    AgentRow,
    DecisionRow,
    LLMChargeRow,
    LLMRequestRow,
    PositionRow,
    RoundRow,
    WorkUnitRow,
)
from tests.benchmarks.results import Figure, record
from tests.benchmarks.soak_script import RssSampler, SpellVenue, Timeline, status_kib
from tests.fakes.openai_server import FakeOpenAIServer, FirstMarketBettor
from tests.fakes.polymarket_server import open_from_now, real_market
from tests.fakes.venue_server import Fault
from tests.workers.llm_study import start, stop
from tests.workers.study import ROOT, arena
from tests.workers.tcp_proxy import TcpProxy

MINUTES = int(os.environ.get("ARENA_SOAK_MINUTES", "30"))
EVERY_MIN = (1, 2, 3)  # one cohort per cadence, in minutes
LEASE_S, CUT_S = 10, 30  # the leader's and the workers' lease; each cut lasts longer
GRACE_1M = "20s"  # the 1-minute cohort's catch_up_grace: rounds due during a cut are missed
LLM_AGENTS = 2
SERVE_ENV = {
    "ARENA_LEADER_LEASE": f"{LEASE_S}s",
    "ARENA_ROUNDS_EVERY": "10s",
    "ARENA_MARKS_EVERY": "20s",
    "ARENA_SYNC_EVERY": "1m",
    "ARENA_SETTLE_EVERY": "1m",
    "ARENA_COMPLETE_EVERY": "1m",
}
BEFORE_CUT = timedelta(seconds=20)  # two runs of the rounds job
BACKOFF_CAP = timedelta(seconds=30)  # the longest wait between reconnect attempts
WIND_DOWN_S = 300  # after the last round's time: how long its units may take to finish

pytestmark = [pytest.mark.benchmark, pytest.mark.postgres, pytest.mark.timeout(MINUTES * 60 + 900)]


@pytest.fixture
def venue() -> Iterator[SpellVenue]:
    with SpellVenue() as fake:
        for index in range(8):
            fake.add(real_market(index))
        open_from_now(fake, datetime.now(UTC))
        yield fake


@pytest.fixture
def provider() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.responder = FirstMarketBettor()
        yield server


@pytest.fixture
def proxy(postgres_database: URL) -> Iterator[TcpProxy]:
    tcp = TcpProxy((postgres_database.host or "127.0.0.1", postgres_database.port or 5432))
    tcp.up()
    yield tcp
    tcp.down()


def _config(path: Path, every: int, start_at: datetime, base_url: str) -> Path:
    """A live cohort with a round every ``every`` minutes for the soak, baselines and LLM agents;
    no price hidden (the fake provider bets on the first market listed: a hidden price would make
    its every bet an invalid answer)."""
    grace = f'catch_up_grace = "{GRACE_1M}"\n' if every == 1 else ""
    llm = "".join(
        f'\n[[agents]]\nname = "llm-{i}"\nkind = "llm"\nmodel = "fake/model"\nbase_url = "{base_url}"\n'
        'api_key_env = ""\ntimeout_s = 10\n'
        for i in range(LLM_AGENTS)
    )
    baselines = "".join(
        f'\n[[agents]]\nname = "{k}"\nkind = "{k}"\n' for k in ("favorite", "random", "kelly")
    )
    path.write_text(
        f'name = "soak-{every}m"\nmode = "live"\nvenue = "polymarket"\n'
        f"start = {start_at:%Y-%m-%dT%H:%M:%SZ}\n"
        'call_timeout = "20s"\nround_budget = "30s"\n'
        f'\n[schedule]\nevery = "{every}m"\nrounds = {MINUTES // every}\n{grace}'
        '\n[marks]\nevery = "1m"\n'
        "\n[tournament]\nhidden_fraction = 0\n" + baselines + llm,
        encoding="utf-8",
    )
    return path


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        arena(*args), cwd=ROOT, env={**os.environ, "COLUMNS": "200", **env}, capture_output=True, text=True
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _size(engine: Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_database_size(current_database())")).scalar_one())


def _rounds(engine: Engine, cohort: str) -> list[RoundRow]:
    with Session(engine) as session:
        return list(session.exec(select(RoundRow).where(RoundRow.cohort_id == cohort)))


def _wait(predicate: Callable[[], bool], until: float, what: str) -> None:
    while not predicate():
        assert time.time() < until, f"timed out waiting for {what}"
        time.sleep(5)


def _held_market(engine: Engine) -> str | None:
    """The open market most agents hold a position in (the fake bettor's first market)."""
    with Session(engine) as session:
        held = session.exec(select(PositionRow.market_id).where(PositionRow.status == "open")).all()
    return Counter(held).most_common(1)[0][0] if held else None


def _resolve_held(venue: SpellVenue, engine: Engine) -> Callable[[], None]:
    def resolve() -> None:
        market = _held_market(engine)
        assert market is not None, "no open position to resolve"
        venue.resolve(market, "YES", f"{datetime.now(UTC):%Y-%m-%dT%H:%M:%SZ}")

    return resolve


def _script(timeline: Timeline, venue: SpellVenue, proxy: TcpProxy, engine: Engine) -> None:
    """The faults, at offsets from the first rounds' time scaled to the run's length."""
    span = MINUTES * 60
    rng = random.Random(20_251_129)
    for minute in range(1, MINUTES):
        timeline.at(minute * 60 - 20, "prices move", lambda: venue.move_prices(rng, 3))
    spell = max(60.0, span / 15)

    def on(fault: Fault) -> Callable[[], None]:
        return lambda: setattr(venue, "spell", fault)

    off = on(None)  # type: ignore[arg-type]
    timeline.spell(span * 0.15, spell, "venue answers 503", on(Fault(status=503)), off)
    timeline.spell(span * 0.55, spell, "venue stalls 16 s", on(Fault(delay=16.0)), off)
    for fraction in (0.25, 0.5, 0.8):
        timeline.at(span * fraction, "a held market resolves YES", _resolve_held(venue, engine))
    for fraction in (0.35, 0.7):
        timeline.spell(span * fraction, CUT_S, "database cut", proxy.down, proxy.up)


def _not_run_only_in_cuts(rounds: list[RoundRow], cuts: list[tuple[datetime, datetime]]) -> None:
    """Every round not run (missed, failed) was due during a cut, or just before it (after the
    rounds job's last run), or just after it (while the reconnect's backoff still waits)."""
    for row in rounds:
        if row.status in ("done", "empty"):
            continue
        due = row.scheduled_at.replace(tzinfo=UTC) if row.scheduled_at.tzinfo is None else row.scheduled_at
        assert any(a - BEFORE_CUT <= due <= b + BACKOFF_CAP for a, b in cuts), (
            f"round {row.round_index} of {row.cohort_id} ({row.status}) due at {due:%H:%M:%S}: no cut then"
        )


def test_bench_soak_live_operation(
    postgres_database: URL, venue: SpellVenue, provider: FakeOpenAIServer, proxy: TcpProxy, tmp_path: Path
) -> None:
    direct = postgres_database.render_as_string(hide_password=False)
    through = postgres_database.set(port=proxy.port).render_as_string(hide_password=False)
    upgrade(direct)
    engine = make_engine(direct)
    env = {"ARENA_DATABASE_URL": direct, "ARENA_GAMMA_URL": venue.url, "ARENA_CLOB_URL": venue.url}
    synced = _run("markets", "sync", env=env)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    first = (datetime.now(UTC) + timedelta(seconds=90)).replace(second=0, microsecond=0)
    cohorts: dict[int, str] = {}
    for every in EVERY_MIN:
        config = _config(tmp_path / f"soak-{every}m.toml", every, first, provider.base_url)
        launched = _run("cohort", "launch", str(config), "--id", f"soak-{every}m", env=env)
        assert launched.returncode == 0, launched.stdout + launched.stderr
        cohorts[every] = f"soak-{every}m"
    size_before = _size(engine)

    live = {**env, "ARENA_DATABASE_URL": through, **SERVE_ENV}
    metrics_port = _free_port()
    serve_cmd = ("serve", "--poll", "2", "--metrics-port", str(metrics_port))
    procs = {"serve": start(*serve_cmd, log=tmp_path / "serve.log", env=live)}
    for i in (1, 2):
        worker_cmd = ("worker", "--lease", str(LEASE_S), "--poll", "1")
        procs[f"worker-{i}"] = start(*worker_cmd, log=tmp_path / f"worker-{i}.log", env=live)
    print(f"\nsoak: {MINUTES} min from {first:%H:%M} UTC; logs in {tmp_path}")
    sampler = RssSampler({n: p.pid for n, p in procs.items()}, every=10).start()
    timeline = Timeline(start=first.timestamp())
    _script(timeline, venue, proxy, engine)
    timeline.run()
    end = first + timedelta(minutes=MINUTES)
    try:
        time.sleep(max(0.0, end.timestamp() - time.time()))
        _wait(
            lambda: all(
                len(rs) == MINUTES // e and all(r.status in ("done", "empty", "missed", "failed") for r in rs)
                for e, c in cohorts.items()
                for rs in [_rounds(engine, c)]
            ),
            end.timestamp() + WIND_DOWN_S,
            "every round to finish",
        )
        size_after = _size(engine)
        crashed = {n: p.returncode for n, p in procs.items() if p.poll() is not None}
        peaks = {n: (status_kib(p.pid, "VmHWM") or 0) / 1024 for n, p in procs.items()}
        status = _run("status", "--json", env=env)
        reconciled = {e: _run("cohort", "reconcile", c, env=env) for e, c in cohorts.items()}
        metrics = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).text
    finally:
        timeline.stop()
        sampler.stop()
        exits = {n: stop(p) for n, p in procs.items()}
    logs = {n: (tmp_path / f"{n}.log").read_text(encoding="utf-8") for n in procs}
    print("faults:\n  " + "\n  ".join(timeline.log))
    print(f"venue requests answered with a fault: {venue.faulted}")
    print(f"arena status --json (exit {status.returncode}):\n{status.stdout}{status.stderr}")

    assert not crashed, f"exited during the soak: {crashed}"
    assert exits == dict.fromkeys(procs, 0), exits
    assert "arena_database_up 1" in metrics
    for every, result in reconciled.items():
        assert result.returncode == 0, f"reconcile soak-{every}m:\n{result.stdout}{result.stderr}"

    figures: list[Figure] = [Figure("duration", MINUTES, "min")]
    cuts = timeline.windows["database cut"]
    with Session(engine) as session:
        units = session.exec(select(WorkUnitRow)).all()
        errors = session.exec(select(DecisionRow).where(DecisionRow.status == "error")).all()
        stored = len(session.exec(select(LLMRequestRow.seq)).all())
        charged = len(session.exec(select(LLMChargeRow.seq)).all())
        for every, cohort in cohorts.items():
            rounds = _rounds(engine, cohort)
            agents = session.exec(select(AgentRow.id).where(AgentRow.cohort_id == cohort)).all()
            decisions = session.exec(
                select(DecisionRow.round_id, DecisionRow.agent_id).where(DecisionRow.cohort_id == cohort)
            ).all()
            assert len({r.round_index for r in rounds}) == len(rounds)  # one row per round
            assert len(decisions) == len(set(decisions))  # one decision per agent per round
            asked = [r for r in rounds if r.status in ("done", "missed")]
            assert len(decisions) == len(asked) * len(agents), (every, len(decisions), len(asked))
            _not_run_only_in_cuts(rounds, cuts)
            by_status = Counter(r.status for r in rounds)
            run = by_status["done"] + by_status["empty"]
            figures += [
                Figure(
                    f"cohort every {every} min: rounds run (of rounds due)",
                    run,
                    "rounds",
                    floor=MINUTES // every,
                ),
                Figure(f"cohort every {every} min: rounds missed", by_status["missed"], "rounds"),
            ]
    taken_over = [u for u in units if u.attempts > 1]
    figures += [
        Figure(
            "work units: attempts (of units)", sum(u.attempts for u in units), "attempts", floor=len(units)
        ),
        Figure("work units taken over after a lease expired", len(taken_over), "units"),
        Figure(
            "LLM requests sent (of requests stored)",
            len(provider.requests),
            "requests",
            floor=stored + charged,
        ),
        Figure("agent errors", len(errors), "decisions"),
        Figure(
            "cohorts reconciled (of cohorts)",
            sum(r.returncode == 0 for r in reconciled.values()),
            "cohorts",
            floor=len(cohorts),
        ),
        Figure(
            "database growth per day at these cadences",
            (size_after - size_before) / 2**20 * 86_400 / (MINUTES * 60),
            "MiB",
        ),
    ]
    for name in procs:
        last, first_quarter = sampler.growth(name)
        figures += [
            Figure(f"{name}: peak RSS", peaks[name], "MiB"),
            Figure(f"{name}: RSS, last quarter (of first quarter)", last, "MiB", floor=first_quarter),
        ]
    for name, log in logs.items():
        at = log.find("Traceback")
        assert at < 0, f"{name} printed a traceback:\n{log[max(0, at - 500) : at + 1500]}"
    document = json.loads(status.stdout)
    figures += [
        Figure("arena status --json at the end: exit code", status.returncode, ""),
        Figure("arena status --json at the end: problems", len(document["problems"]), "problems"),
    ]
    record(
        "soak",
        measures=(
            f"{MINUTES} min of arena serve and 2 workers on PostgreSQL, 3 live cohorts "
            "(a round every 1, 2, 3 min), "
            f"venue 503s and stalls, 2 database cuts of {CUT_S} s"
        ),
        command=f"ARENA_SOAK_MINUTES={MINUTES} pytest tests/benchmarks/test_bench_soak.py -s -m benchmark",
        figures=figures,
    )
