"""A worker killed after its LLM agent's provider answered, before the decision was stored: the
answer was paid for, so its cost is on record (``llm_charge``) though no decision holds it, the
spending caps count it, and the worker that takes the unit over stores only its own requests.
Real processes on PostgreSQL: ``arena replay --by-workers`` plans, ``arena worker`` decides, a
fake provider on loopback answers (an unusable answer at once, then the corrected one slowly, so
the kill lands between the two)."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.db.engine import make_engine
from arena.db.migrate import upgrade
from arena.db.models import AgentRow, DecisionRow, LLMChargeRow, LLMRequestRow, WorkUnitRow
from arena.engine.runtime.budgets import spend_by_agent
from tests.engine.helpers import synthetic_dataset
from tests.engine.ledger_log import assert_ledgers_reconcile
from tests.fakes.openai_server import FakeOpenAIServer, RecordedRequest, Reply
from tests.workers import ON_POSTGRES
from tests.workers.compare import cohort_named
from tests.workers.llm_study import llm_agents, start, start_worker, stop

pytestmark = [ON_POSTGRES, pytest.mark.slow]
TIMEOUT = 180
CENT = Decimal("0.01")
HOLD = json.dumps({"reasoning": "holding", "actions": [], "probabilities": {}})


class SlowCorrections:
    """The first answer of each decision is unusable (at once); the corrected one comes after
    ``delay_s`` until ``hurry`` is set. Each request costs a cent."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.hurry = threading.Event()

    def __call__(self, request: RecordedRequest) -> Reply:
        if len(request.body["messages"]) <= 2:
            return Reply.ok("Let me think about it.", cost=0.01)
        # slower than nothing, faster than the agent's timeout_s (30 s): the kill lands meanwhile
        return Reply.ok(HOLD, cost=0.01, delay_s=0 if self.hurry.is_set() else self.delay_s)


@pytest.fixture
def pg(db_url: str) -> Engine:
    upgrade(db_url)
    return make_engine(db_url)


@pytest.fixture
def provider() -> Iterator[tuple[FakeOpenAIServer, SlowCorrections]]:
    with FakeOpenAIServer() as server:
        answers = SlowCorrections(delay_s=25)
        server.responder = answers
        yield server, answers


def _config(path: Path, dataset: Path, base_url: str) -> Path:
    path.write_text(
        f'name = "paid"\nseed = 3\ndataset = "{dataset}"\nstart = "2025-01-01T00:00:00Z"\n'
        'call_timeout = "90s"\nround_budget = "120s"\n'
        '\n[schedule]\nevery = "4d"\nrounds = 2\n'
        '\n[universe]\nmax_markets = 4\nmin_price = "0.01"\nmax_price = "0.99"\n'
        '\n[[agents]]\nname = "favorite"\nkind = "favorite"\n' + llm_agents(base_url, 1),
        encoding="utf-8",
    )
    return path


def _wait(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _charges(engine: Engine) -> list[LLMChargeRow]:
    with Session(engine) as session:
        return list(session.exec(select(LLMChargeRow).order_by(col(LLMChargeRow.seq))))


def test_a_killed_workers_paid_request_is_recorded_and_counted(
    pg: Engine, db_url: str, provider: tuple[FakeOpenAIServer, SlowCorrections], tmp_path: Path
) -> None:
    server, answers = provider
    config = _config(tmp_path / "paid.toml", synthetic_dataset(tmp_path / "data", days=8), server.base_url)
    planner = start(
        "replay", str(config), "--by-workers", "--database-url", db_url, log=tmp_path / "plan.log"
    )
    first = start_worker(db_url, tmp_path / "first.log")
    second = None
    try:
        _wait(lambda: bool(_charges(pg)), "the first answer's charge")
        # The kill lands while the correction is held by the provider, not before it was sent.
        _wait(lambda: len(server.requests) == 2, "the correction request")
        first.send_signal(signal.SIGKILL)
        first.wait()
        answers.hurry.set()
        second = start_worker(db_url, tmp_path / "second.log")
        planner.wait(timeout=TIMEOUT)
        assert planner.returncode == 0, (tmp_path / "plan.log").read_text()[-3000:]
    finally:
        for proc in (planner, first, second):
            if proc is not None:
                stop(proc)
    cohort = cohort_named(pg, "paid")
    (left,) = _charges(pg)  # the killed attempt's first request: paid, held by no decision
    assert (left.seq, left.cost_usd) == (1, CENT) and f":{first.pid}:" in left.claim_token
    with Session(pg) as session:
        llm = session.exec(select(AgentRow.id).where(AgentRow.name == "llm-0")).one()
        decisions = session.exec(select(DecisionRow).where(DecisionRow.agent_id == llm)).all()
        requests = session.exec(select(LLMRequestRow).where(LLMRequestRow.agent_id == llm)).all()
        units = session.exec(select(WorkUnitRow).where(WorkUnitRow.agent_id == llm)).all()
    taken_over = [u for u in units if u.attempts == 2]
    assert len(taken_over) == 1 and taken_over[0].state == "done"
    assert len(decisions) == 2 and {d.cost_usd for d in decisions} == {2 * CENT}
    assert left.decision_id in {d.id for d in decisions}
    assert left.claim_token not in {d.claim_token for d in decisions}
    assert len(requests) == 4  # two per stored decision: the dead attempt's request is not among them
    assert spend_by_agent(pg, cohort)[llm] == 5 * CENT  # 4 stored + 1 paid by the killed worker
    assert len(server.requests) == 6  # 2 by the killed worker, 2 for each stored decision
    assert_ledgers_reconcile(pg, cohort)
