"""Every answer in the bad-output corpus, sent over real HTTP through the LLM bettor.

Each must end as a recorded error (raw text kept, no actions) whose message names the case's
planted defect, or as a valid decision whose actions the ledger's own check accepts against
quotes built independently from the snapshot.
``decide`` raising at all is a failure.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import Iterator

import httpx
import pytest

from agents.llm.bettor import LLMBettor
from agents.llm.settings import LLMSettings
from agents.types import AgentView
from markets.bounded import kept_text
from portfolio.quotes import MidQuotes
from portfolio.validation import check_actions
from tests.agents.corpus.generate import Case, all_cases, valid_text
from tests.agents.corpus.world import view
from tests.fakes.openai_server import FakeOpenAIServer, Reply

CASES = all_cases()
TLS = ssl.create_default_context()  # built once: a fresh context per client costs ~0.1 s


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def ledger_problems(decision_actions: tuple[object, ...], agent_view: AgentView) -> list[str]:
    """The ledger's verdict, with quotes for every market of the snapshot (not just the listed ones)."""
    entries = agent_view.snapshot.entries
    prices = {e.market.market_id: dict(e.price.prices) for e in entries}  # as arena/engine/runtime/quotes.py
    quotes = MidQuotes(prices, outcomes={e.market.market_id: e.market.outcomes for e in entries})
    positions = {p.position_id: (p.market_id, p.outcome, p.shares) for p in agent_view.portfolio.positions}
    found = check_actions(
        decision_actions,  # type: ignore[arg-type]
        cash=agent_view.portfolio.cash,
        rules=agent_view.rules,
        quotes=quotes,
        positions=positions,
    )
    return [str(e) for e in found]


def test_the_corpus_is_large_and_mostly_bad() -> None:
    assert len(CASES) >= 300
    assert sum(c.expect == "error" for c in CASES) >= 280
    assert any(len(c.text) >= 1_000_000 for c in CASES)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_every_corpus_answer_ends_as_an_error_or_a_ledger_valid_decision(
    server: FakeOpenAIServer, case: Case
) -> None:
    server.script(Reply.ok(case.text))
    settings = LLMSettings(model="m", base_url=server.base_url, invalid_retries=0, transport_retries=0)
    agent_view = view()
    async with httpx.AsyncClient(verify=TLS) as http:
        decision = await LLMBettor("corpus", settings, http, None).decide(agent_view)
    if case.expect == "error":
        assert decision.is_error, f"accepted a bad answer: {decision.actions}"
        # Only an answer with nothing in it is empty; everything else is refused as invalid output.
        assert decision.error_kind == ("invalid_output" if case.text.strip() else "empty_content")
        assert decision.actions == () and decision.probabilities == {}
        assert decision.raw_response == kept_text(case.text, settings.max_raw_kept_chars)  # past it: a note
        assert decision.error and "\n" not in decision.error and len(decision.error) < 2000
        assert case.reason in decision.error, f"refused, but not for the planted defect: {decision.error}"
    else:
        assert not decision.is_error, decision.error
        assert ledger_problems(decision.actions, agent_view) == []
        known = {e.market.market_id: e.market.outcomes for e in agent_view.snapshot.entries}
        for market_id, stated in decision.probabilities.items():
            assert set(stated) <= set(known[market_id])
            assert all(math.isfinite(p) and 0 <= p <= 1 for p in stated.values())


@pytest.mark.anyio
@pytest.mark.parametrize(
    "case", [c for c in CASES if c.expect == "error"], ids=[c.name for c in CASES if c.expect == "error"]
)
async def test_every_bad_corpus_answer_can_be_sent_back_with_the_reasons(
    server: FakeOpenAIServer, case: Case
) -> None:
    """The corrective retry echoes the bad answer to the model: that request must be valid JSON too."""
    server.script(Reply.ok(case.text), Reply.ok(valid_text()))
    settings = LLMSettings(model="m", base_url=server.base_url, invalid_retries=1, transport_retries=0)
    async with httpx.AsyncClient(verify=TLS) as http:
        decision = await LLMBettor("corpus", settings, http, None).decide(view())
    assert not decision.is_error, decision.error
    follow_up = server.requests[-1].body["messages"][2]
    if not case.text.strip():  # nothing to echo: the model is told its answer was empty
        assert follow_up["content"].startswith("Your answer was empty.")
    else:
        assert follow_up["role"] == "assistant"
        assert case.text.startswith(follow_up["content"].removesuffix(" …[cut]"))
