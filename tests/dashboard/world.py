"""A small, real arena database for dashboard and report tests.

Rows are written through ``arena.db`` models, and every fill, position and portfolio mark comes
from the real ``portfolio.Ledger`` (through the engine's own row mappers), so the books agree to
the cent exactly as an engine run would leave them. The world:

- cohort ``replay-demo`` (replay, completed): five markets with daily prices, four weekly
  rounds, agents ``gpt-4o`` and ``claude`` (LLMs), ``random`` and ``market`` (baselines) and
  ``broken-bot`` (an LLM whose every answer is an error). Fed resolves NO, BTC YES, the eclipse
  market is voided; two markets stay open.
- cohort ``live-now`` (live, running): ``gpt-4o`` and ``hold``, one round, bets only on markets
  that have not resolved (so no resolved bets, no calibration yet).

``leak`` plants a secret where a careless report could copy it: error texts, raw prompts and
responses, reasoning, agent settings, the frozen config and a market description.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import Engine
from sqlmodel import select

from arena.cohorts.config import CohortConfig, parse_config
from arena.db.engine import session_scope
from arena.db.models import (
    AgentRow,
    CohortRow,
    DecisionRow,
    FillRow,
    MarketRow,
    MarketSnapshotRow,
    PortfolioSnapshotRow,
    PositionRow,
    ResolutionRow,
    RoundMarketRow,
    RoundRow,
    ToolCallRow,
)
from arena.engine.books.marks import record_closes, snapshot_row
from arena.engine.rounds.decisions import action_json
from arena.engine.store.ledger_store import fill_to_row, position_row
from portfolio import Bet, Ledger, MidQuotes, Rules, Sell

T0 = datetime(2025, 1, 6, tzinfo=UTC)
DAY = timedelta(days=1)
DAYS = 28
REPLAY, LIVE = "replay-demo", "live-now"
SOURCE = "replay:tiny"


@dataclass(frozen=True)
class MarketSpec:
    market_id: str
    question: str
    category: str | None
    start: float
    step: float
    resolution: tuple[str, int] | None  # (kind, day) or still open

    def price(self, day: int) -> Decimal:
        value = self.start + self.step * day + 0.02 * math.sin(day / 2)
        return Decimal(str(round(min(max(value, 0.03), 0.97), 3)))


MARKETS = (
    MarketSpec(
        "polymarket:fed-cut", "Will the Fed cut rates in March 2025?", "economics", 0.40, -0.012, ("NO", 20)
    ),
    MarketSpec(
        "polymarket:btc-100k", "Will Bitcoin close above $100k on Jan 31?", "crypto", 0.55, 0.014, ("YES", 24)
    ),
    MarketSpec(
        "manifold:eclipse", "Will the eclipse be visible from Paris?", "science", 0.50, 0.0, ("VOID", 15)
    ),
    MarketSpec("polymarket:election", "Will the incumbent win the election?", "politics", 0.48, 0.002, None),
    MarketSpec("manifold:rain", "Will it rain in London on 1 March?", None, 0.30, 0.004, None),
)
SPEC = {m.market_id: m for m in MARKETS}

# (round, agent) -> (actions, stated probabilities of YES, reasoning); absent agents hold.
FED, BTC, ECLIPSE, ELECTION, RAIN = (m.market_id for m in MARKETS)
PLAN: dict[tuple[int, str], tuple[list[Any], dict[str, float], str]] = {
    (0, "gpt-4o"): (
        [Bet(BTC, "YES", Decimal(500)), Bet(FED, "NO", Decimal(300))],
        {BTC: 0.7, FED: 0.2, ECLIPSE: 0.5},
        "BTC momentum is strong; the Fed signalled patience.",
    ),
    (1, "gpt-4o"): ([Bet(ELECTION, "YES", Decimal(200))], {BTC: 0.75, ELECTION: 0.55}, "Polls tightened."),
    (2, "gpt-4o"): ([Sell("SELL-BTC", Decimal(50))], {BTC: 0.8}, "Taking half the BTC profit."),
    (0, "claude"): (
        [Bet(BTC, "NO", Decimal(1000)), Bet(FED, "NO", Decimal(400)), Bet(ECLIPSE, "YES", Decimal(100))],
        {BTC: 0.35, FED: 0.25},
        "BTC looks overextended.",
    ),
    (1, "claude"): ([Bet(RAIN, "YES", Decimal(150))], {RAIN: 0.45}, "Wet spring expected."),
    (0, "random"): ([Bet(FED, "YES", Decimal(120)), Bet(RAIN, "NO", Decimal(75))], {}, "random draw"),
    (2, "random"): ([Bet(BTC, "YES", Decimal(60))], {}, "random draw"),
}
LIVE_PLAN: dict[tuple[int, str], tuple[list[Any], dict[str, float], str]] = {
    (0, "gpt-4o"): ([Bet(RAIN, "YES", Decimal(250))], {RAIN: 0.4, ELECTION: 0.5}, "Rain is underpriced."),
}
REJECTED = {(2, "claude"): "leg 0: amount 9000 exceeds the max bet 2,337.50"}


def world_config(cohort: str, leak: str | None) -> CohortConfig:
    """The frozen config of a world cohort, as ``arena.cohorts.launch.launch`` would store it."""
    llm = {"kind": "llm", "api_key_env": "OPENROUTER_API_KEY"}
    if leak:
        llm["api_key"] = leak  # a careless user pasting the key into the config
    if cohort == REPLAY:
        agents = [
            {"name": "gpt-4o", "model": "openai/gpt-4o", **llm},
            {"name": "claude", "model": "anthropic/claude-sonnet-4.5", **llm},
            {"name": "random", "kind": "random"},
            {"name": "market", "kind": "market"},
            {"name": "broken-bot", "model": "acme/broken-1", **llm},
        ]
        raw = {"name": "Replay demo", "start": T0, "schedule": {"every": "7d", "rounds": 4}, "agents": agents}
    else:
        agents = [{"name": "gpt-4o", "model": "openai/gpt-4o", **llm}, {"name": "hold", "kind": "hold"}]
        raw = {
            "name": "Live now",
            "mode": "live",
            "venue": "polymarket",
            "start": T0 + 26 * DAY,
            "schedule": {"every": "1d", "rounds": 10},
            "agents": agents,
        }
    # The world's decisions are written by hand, every price shown: no tournament hidden period.
    return parse_config({**raw, "tournament": {"hidden_fraction": 0}})


def build_world(engine: Engine, *, leak: str | None = None) -> None:
    """Insert both cohorts (see the module docstring) into an empty database at head."""
    with session_scope(engine) as session:
        _markets(session, leak)
        _cohort(session, REPLAY, "replay", "completed", leak, rounds=4, days=range(DAYS))
        _cohort(session, LIVE, "live", "running", leak, rounds=1, days=range(26, DAYS))


def _markets(session: Any, leak: str | None) -> None:
    for spec in MARKETS:
        venue, venue_id = spec.market_id.split(":")
        description = f"Resolves per the official source. {f'debug token {leak}' if leak else ''}".strip()
        session.add(
            MarketRow(
                id=spec.market_id,
                venue=venue,
                venue_id=venue_id,
                question=spec.question,
                description=description,
                outcomes_json=["YES", "NO"],
                category=spec.category,
                volume=Decimal(10_000 + 1_000 * len(venue_id)),
                url=f"https://example.org/{venue_id}",
                close_time=T0 + 40 * DAY,
                first_seen_at=T0 - 5 * DAY,
                updated_at=T0 - 5 * DAY,
            )
        )
        last = DAYS if spec.resolution is None else spec.resolution[1]
        for day in range(-5, last + 1):
            yes = spec.price(day)
            session.add(
                MarketSnapshotRow(
                    market_id=spec.market_id,
                    source=SOURCE,
                    observed_at=T0 + day * DAY,
                    prices_json={"YES": str(yes), "NO": str(1 - yes)},
                )
            )
        if spec.resolution is not None:
            kind, day = spec.resolution
            payouts = {
                "VOID": {"YES": "0", "NO": "0"},
                "YES": {"YES": "1", "NO": "0"},
                "NO": {"YES": "0", "NO": "1"},
            }
            session.add(
                ResolutionRow(
                    market_id=spec.market_id,
                    kind=kind,
                    payouts_json=payouts[kind],
                    resolved_at=T0 + day * DAY,
                    detected_at=T0 + day * DAY,
                    source=SOURCE,
                )
            )
    session.flush()


def _open(day: int) -> list[MarketSpec]:
    return [m for m in MARKETS if m.resolution is None or m.resolution[1] > day]


def _cohort(
    session: Any, cohort_id: str, mode: str, status: str, leak: str | None, *, rounds: int, days: range
) -> None:
    frozen = world_config(cohort_id, leak)
    config = frozen.model_dump(mode="json")
    session.add(
        CohortRow(
            id=cohort_id,
            name=frozen.name,
            mode=mode,
            status=status,
            seed=0,
            config_json=config,
            config_hash=frozen.config_hash(),
            arena_version="0.1.0",
            created_at=T0 - DAY,
            started_at=T0 + days[0] * DAY,
            finished_at=T0 + DAYS * DAY if status == "completed" else None,
        )
    )
    agents = [
        AgentRow(
            cohort_id=cohort_id,
            name=a["name"],
            kind=a["kind"],
            model_id=a.get("model"),
            settings_json={k: v for k, v in a.items() if k not in ("name", "kind")},
            created_at=T0 - DAY,
        )
        for a in config["agents"]
    ]
    session.add_all(agents)
    session.flush()
    books = {a.name: (a, Ledger(Rules(), str(a.id))) for a in agents}
    every = 7 if mode == "replay" else 1
    round_days = {days[0] + every * k: k for k in range(rounds)}
    for day in days:
        at = T0 + day * DAY
        _settle(session, books, day, at)
        if day in round_days:
            _round(session, cohort_id, round_days[day], at, books, leak)
        for agent, ledger in books.values():
            prices = {m.market_id: {"YES": m.price(day), "NO": 1 - m.price(day)} for m in _open(day)}
            mark = snapshot_row(agent.id, cohort_id, ledger.mark(prices, at))
            session.add(PortfolioSnapshotRow(**mark))
            record_closes(session, [mark])
    for agent, ledger in books.values():
        for position in ledger.positions.values():
            session.add(PositionRow(**position_row(agent.id, position, at=T0 + days[-1] * DAY)))


def _settle(session: Any, books: dict[str, Any], day: int, at: datetime) -> None:
    for spec in MARKETS:
        if spec.resolution is None or spec.resolution[1] != day:
            continue
        kind = spec.resolution[0]
        payouts = {"YES": Decimal(kind == "YES"), "NO": Decimal(kind == "NO")}
        for agent, ledger in books.values():
            for fill in ledger.settle(spec.market_id, payouts, at, void=kind == "VOID"):
                session.add(FillRow(**fill_to_row(fill, agent_id=agent.id, decision_id=None)))


def _round(
    session: Any, cohort_id: str, index: int, at: datetime, books: dict[str, Any], leak: str | None
) -> None:
    day = (at - T0).days
    offered = _open(day)
    prices = {m.market_id: {"YES": m.price(day), "NO": 1 - m.price(day)} for m in offered}
    row = RoundRow(
        cohort_id=cohort_id,
        round_index=index,
        scheduled_at=at,
        status="done",
        snapshot_hash=f"sha256:{cohort_id}-{index}",
        market_count=len(offered),
        started_at=at,
        finished_at=at,
    )
    session.add(row)
    session.flush()
    for spec in offered:
        yes = spec.price(day)
        session.add(
            RoundMarketRow(
                round_id=row.id,
                market_id=spec.market_id,
                source=SOURCE,
                observed_at=at,
                prices_json={"YES": str(yes), "NO": str(1 - yes)},
            )
        )
    for agent, ledger in books.values():
        _decide(session, row, agent, ledger, prices, leak)


def _decide(
    session: Any, rnd: RoundRow, agent: AgentRow, ledger: Ledger, prices: dict[str, Any], leak: str | None
) -> None:
    index, at = rnd.round_index, rnd.scheduled_at
    plan = PLAN if rnd.cohort_id == REPLAY else LIVE_PLAN
    actions, stated, reasoning = plan.get((index, agent.name), ([], {}, "Nothing worth the risk this week."))
    actions = [_resolve_sell(a, ledger) for a in actions]
    if agent.kind == "market":
        stated, reasoning = {m: float(p["YES"]) for m, p in prices.items()}, "the market price"
    error = kind = None
    status = "done"
    if agent.name == "broken-bot":
        status, kind = "error", "invalid_json"
        error = f"response is not JSON: expected '{{' at line 1 column 1{f' (auth {leak})' if leak else ''}"
    elif rnd.cohort_id == REPLAY and (index, agent.name) in REJECTED:
        status, kind, error, actions = "rejected", "invalid_actions", REJECTED[(index, agent.name)], []
    llm = agent.kind == "llm"
    decision = DecisionRow(
        round_id=rnd.id,
        agent_id=agent.id,
        cohort_id=rnd.cohort_id,
        claim_token=f"tok-{rnd.id}-{agent.id}",
        status=status,
        claimed_at=at,
        decided_at=at,
        raw_prompt=f"<markets>{sorted(prices)}</markets>{f' Authorization: Bearer {leak}' if leak else ''}"
        if llm
        else None,
        raw_response=("Sure! {bets: [" + (leak or ""))
        if agent.name == "broken-bot"
        else ('{"bets": []}' if llm else None),
        actions_json=[action_json(a) for a in actions],
        probabilities_json={} if error else {m: {"YES": p} for m, p in stated.items()},
        reasoning=reasoning + (f" key={leak}" if leak and agent.name == "gpt-4o" else ""),
        error=error,
        error_kind=kind,
        prompt_tokens=1200 if llm else 0,
        completion_tokens=300 if llm else 0,
        cost_usd=Decimal("0.0123456789") if llm else Decimal(0),
        latency_s=2.5 + index if llm else 0.01,
        attempts=1,
        prompt_hash="sha256:prompt-v1" if llm else None,
        prompt_version="v1" if llm else None,
        cash_at_start=ledger.cash,
        max_bet=ledger.max_bet(),
    )
    session.add(decision)
    session.flush()
    if llm and agent.name == "gpt-4o" and rnd.cohort_id == REPLAY:
        _research(session, decision, index, leak)
    if status != "done" or not actions:
        return
    quotes = MidQuotes(prices, outcomes={m: ("YES", "NO") for m in prices})
    fills = ledger.apply_decision(actions, quotes, at, decision_id=str(decision.id))
    for fill in fills:
        session.add(FillRow(**fill_to_row(fill, agent_id=agent.id, decision_id=decision.id)))


TOOL_RESULT = '{"question": "**not bold** <b>raw</b> [link](javascript:x)"}'


def _research(session: Any, decision: DecisionRow, index: int, leak: str | None) -> None:
    """One market_details call: in round 0 one whose result was too long to store, in round 1
    one whose result holds the planted key (reports and the dashboard must mask it)."""
    assert decision.id is not None
    long = index == 0
    result = TOOL_RESULT if index != 1 or not leak else f'{{"note": "key {leak}"}}'
    session.add(
        ToolCallRow(
            decision_id=decision.id,
            seq=1,
            agent_id=decision.agent_id,
            step=1,
            call_id="call_1",
            name="market_details",
            arguments='{"market_id": "polymarket:btc"}',
            arguments_sha256="a" * 64,
            arguments_chars=31,
            result=None if long else result,
            result_sha256="b" * 64,
            result_chars=20_000 if long else len(result),
            is_error=False,
            latency_s=0.0042,
        )
    )


def _resolve_sell(action: Any, ledger: Ledger) -> Any:
    """``Sell("SELL-BTC", p)`` in the plan means: sell p% of the open BTC YES position."""
    if isinstance(action, Sell) and action.position_id == "SELL-BTC":
        position_id = ledger.open_position_id(BTC, "YES")
        assert position_id is not None
        return Sell(position_id, action.percent)
    return action


# Secrets an older version let a config hold: not key-shaped, not in the environment, so only the
# structured redaction of headers and URLs can keep them out of what is shown.
OLD_CONFIG_SECRETS = ("c00kie-session-77aa11", "goog-key-5e5e5e5e", "hunter2-basic-pw", "query-sig-0f0f0f")


def plant_old_config_secrets(engine: Engine, cohort_id: str) -> None:
    """Give the cohort's LLM agents (settings and frozen config) the secrets of ``OLD_CONFIG_SECRETS``
    in ``extra_headers`` and ``base_url``, as a config from before the ``env:`` rule stored them."""
    cookie, goog, password, signature = OLD_CONFIG_SECRETS
    planted = {
        "extra_headers": {"Cookie": f"session={cookie}", "X-Goog-Api-Key": goog, "X-Title": "arena"},
        "base_url": f"https://user:{password}@llm.example/v1?api-version=2024&sig={signature}",
    }
    with session_scope(engine) as session:
        cohort = session.get(CohortRow, cohort_id)
        assert cohort is not None
        config = dict(cohort.config_json)
        config["agents"] = [{**a, **planted} if a["kind"] == "llm" else a for a in config["agents"]]
        cohort.config_json = config
        llms = session.exec(select(AgentRow).where(AgentRow.cohort_id == cohort_id, AgentRow.kind == "llm"))
        for agent in llms:
            agent.settings_json = {**agent.settings_json, **planted}


POISONED = "poisoned-old"


def add_poisoned_cohort(engine: Engine, cohort_id: str = POISONED) -> None:
    """A cohort an older version let launch with values now out of range (a bankroll of 1e400, a
    negative seed), with agents, a round and a decision, as it would have been left."""
    config = world_config(REPLAY, None).model_dump(mode="json")
    config = {**config, "name": "Poisoned by an old version", "seed": -7}
    config["rules"] = {**config["rules"], "bankroll": "1E+400"}
    with session_scope(engine) as session:
        session.add(
            CohortRow(
                id=cohort_id,
                name=config["name"],
                mode="replay",
                status="running",
                seed=-7,
                config_json=config,
                config_hash="old",
                arena_version="0.0.1",
                created_at=T0 + 2 * DAY,  # the newest cohort: what the dashboard shows first
            )
        )
        agent = AgentRow(cohort_id=cohort_id, name="hold", kind="hold", settings_json={}, created_at=T0)
        session.add(agent)
        session.flush()
        rnd = RoundRow(cohort_id=cohort_id, round_index=0, scheduled_at=T0, status="done")
        session.add(rnd)
        session.flush()
        assert agent.id is not None and rnd.id is not None
        session.add(
            DecisionRow(
                round_id=rnd.id,
                agent_id=agent.id,
                cohort_id=cohort_id,
                claim_token="t",
                status="done",
                claimed_at=T0,
                decided_at=T0,
                cash_at_start=Decimal("999999"),
                max_bet=Decimal(1),
            )
        )
