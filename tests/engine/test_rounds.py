"""Rounds: what agents see (leakage guard, price visibility), how they are run (timeouts, failure,
peers) and how their decisions fill (mid and realistic fill models)."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from arena.cohorts.config import parse_config
from arena.db.models import CohortRow, DecisionRow, FillRow, RoundMarketRow, RoundRow
from arena.engine.replay.runner import ReplayRunner
from arena.engine.rounds.run import run_round
from arena.engine.runtime.agent_http import AgentHttpClients
from arena.engine.runtime.quotes import build_quotes, taker_fee
from portfolio import Bet, DecisionRejected, Ledger, Rules, Sell, Side
from tests.engine.helpers import (
    A,
    B,
    C,
    config,
    day,
    launch_cohort,
    replay,
    runtime,
    script,
    stored_decisions,
    tiny_dataset,
)
from tests.fakes.openai_server import FakeOpenAIServer, Reply

D = Decimal


def _spy(name: str, log: Path, stake: int = 0) -> dict[str, object]:
    return {
        "name": name,
        "kind": "plugin",
        "path": "tests.engine.bots:SpyBettor",
        "settings": {"log": str(log), "stake": stake},
    }


def _seen(log: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


# -- leakage guard, with a real LLM bettor over HTTP on loopback ------------------------------


def test_knowledge_cutoff_excludes_markets_resolved_before_it_for_every_agent(
    engine: Engine, tmp_path: Path
) -> None:
    secret = "sk-test-secret-987"
    llm = {
        "name": "llm",
        "kind": "llm",
        "model": "test/model",
        "base_url": "",
        "api_key_env": "TEST_LLM_KEY",
        "knowledge_cutoff": "2025-01-12",  # B resolved on day 9 (Jan 10): the model may know it
    }
    answers = iter([_answer(bet=True)])
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok(json.dumps(next(answers, _answer(bet=False))), cost=0.002)
        llm["base_url"] = server.base_url
        data = config(tiny_dataset(tmp_path / "data"), [llm, _spy("spy", tmp_path / "seen.jsonl")])
        cohort_id, source = launch_cohort(engine, data, environ={"TEST_LLM_KEY": secret})
        with Session(engine) as session:
            assert session.get(CohortRow, cohort_id).excluded_markets == 1  # type: ignore[union-attr]

        async def run() -> None:
            async with AgentHttpClients() as http:
                rt = runtime(
                    engine,
                    cohort_id,
                    source,
                    environ={"TEST_LLM_KEY": secret},
                    new_http_client=http.new_client,
                )
                assert rt.excluded == {B}
                await ReplayRunner(rt).run()

        asyncio.run(run())
        prompts = [json.dumps(r.body) for r in server.requests]
    assert len(prompts) == 2 and all(B not in p and "Will B happen" not in p for p in prompts)
    assert [s["markets"] for s in _seen(tmp_path / "seen.jsonl")] == [[C, A], [C, A]]  # sorted ids, no B
    with Session(engine) as session:
        offered = set(session.exec(select(RoundMarketRow.market_id)).all())
        llm_decisions = session.exec(select(DecisionRow).where(DecisionRow.raw_prompt.is_not(None))).all()  # type: ignore[union-attr]
    assert offered == {A, C}
    assert [d.status for d in llm_decisions] == ["done", "done"]
    assert all(d.raw_response and d.cost_usd == D("0.002") and d.prompt_tokens == 1000 for d in llm_decisions)
    assert llm_decisions[0].probabilities_json == {A: {"YES": 0.55}}
    _assert_secret_absent(engine, secret)


def _answer(*, bet: bool) -> dict[str, object]:
    """State P(A) = 0.55, and bet $100 YES on A (first round) or hold."""
    actions = [{"type": "bet", "market_id": A, "outcome": "YES", "amount": 100}] if bet else []
    return {"reasoning": "A looks underpriced.", "actions": actions, "probabilities": {A: 0.55}}


def _assert_secret_absent(engine: Engine, secret: str) -> None:
    from arena.db.models import metadata

    with engine.connect() as connection:
        for table in metadata.sorted_tables:
            for row in connection.execute(table.select()):
                assert secret not in str(tuple(row)), f"the API key leaked into table {table.name}"


# -- price visibility -------------------------------------------------------------------------


def _three_weekly_rounds_seen_by_a_staking_spy(
    engine: Engine, tmp_path: Path, **overrides: object
) -> list[dict[str, object]]:
    """Replay the tiny dataset over rounds on days 0, 7, 14 with a spy that stakes $500 on the
    first market of round 0 (C); what the spy was shown, round by round."""
    log = tmp_path / "seen.jsonl"
    data = config(tiny_dataset(tmp_path / "data"), [_spy("spy", log, stake=500)], **overrides)
    data["schedule"] = {"every": "7d", "rounds": 3}
    replay(engine, data)
    return _seen(log)


def test_hidden_prices_are_hidden_from_snapshot_and_portfolio_but_fills_use_them(
    engine: Engine, tmp_path: Path
) -> None:
    seen = _three_weekly_rounds_seen_by_a_staking_spy(engine, tmp_path, price_visibility={"after_days": 10})
    assert [s["prices_visible"] for s in seen] == [False, False, True]
    assert seen[0]["prices"] == {A: {}, B: {}, C: {}} and seen[0]["history"] == 0
    # Day 7: the position bought on day 0 is shown at cost, flagged stale, with no mark price.
    ((market, mark, value, stale),) = seen[1]["positions"]  # type: ignore[misc]
    assert (market, mark, D(value), stale) == (C, "None", D("500"), True)
    # Day 14: prices are visible again, and so is the mark.
    assert seen[2]["prices"][A] == {"YES": "0.60", "NO": "0.40"}  # type: ignore[index]
    with Session(engine) as session:
        (buy,) = session.exec(select(FillRow).where(FillRow.kind == "buy")).all()
    assert buy.price is not None and buy.amount == D("500")  # filled at the real (hidden) price


def test_tournament_hidden_period_hides_each_market_for_the_first_share_of_its_window(
    engine: Engine, tmp_path: Path
) -> None:
    """hidden_fraction 0.5, rounds on days 0, 7, 14: the cohort ends on day 21. All three markets are
    first offered on day 0, so their windows are A [0, 19], B [0, 9], C [0, 17] (their closes), hidden
    until days 9.5, 4.5 and 8.5. Day 0: all hidden. Day 7: B shown, A and C hidden, and the position
    bought in C on day 0 is shown at cost. Day 14: A and C shown (B has closed)."""
    seen = _three_weekly_rounds_seen_by_a_staking_spy(engine, tmp_path, tournament={"hidden_fraction": 0.5})
    assert [s["prices_visible"] for s in seen] == [True, True, True]  # the cohort's setting: unchanged
    assert seen[0]["prices"] == {A: {}, B: {}, C: {}} and seen[0]["history"] == 0
    assert seen[1]["prices"] == {A: {}, B: {"YES": "0.20", "NO": "0.80"}, C: {}}
    ((market, mark, value, stale),) = seen[1]["positions"]  # type: ignore[misc]
    assert (market, mark, D(value), stale) == (C, "None", D("500"), True)
    assert seen[2]["prices"] == {A: {"YES": "0.60", "NO": "0.40"}, C: {"YES": "0.80", "NO": "0.20"}}
    ((market, mark, _, stale),) = seen[2]["positions"]  # type: ignore[misc]
    assert (market, mark, stale) == (C, "0.80", False)


def test_never_visible(engine: Engine, tmp_path: Path) -> None:
    log = tmp_path / "seen.jsonl"
    replay(engine, config(tiny_dataset(tmp_path / "data"), [_spy("spy", log)], price_visibility="never"))
    assert [s["prices_visible"] for s in _seen(log)] == [False, False]


# -- running agents: timeouts, failures, peers ----------------------------------------------------


def test_a_slow_agent_times_out_and_holds_while_the_others_trade(engine: Engine, tmp_path: Path) -> None:
    slow = {
        "name": "slow",
        "kind": "plugin",
        "path": "tests.engine.bots:SlowBettor",
        "settings": {"delay": 5},
    }
    data = config(
        tiny_dataset(tmp_path / "data"), [slow, {"name": "fav", "kind": "favorite"}], call_timeout="1s"
    )
    data["schedule"] = {"every": "7d", "rounds": 1}
    result, _ = replay(engine, data)
    (report,) = result.rounds
    assert report.status == "done" and report.statuses == {"slow": "error", "fav": "done"}
    slow_row = stored_decisions(engine)[0]
    assert slow_row.error_kind == "timeout" and "call timeout of 0:00:01" in (slow_row.error or "")


def test_a_round_where_every_agent_fails_is_a_failed_round(engine: Engine, tmp_path: Path) -> None:
    failing = {"kind": "plugin", "path": "tests.engine.bots:FailingBettor"}
    data = config(tiny_dataset(tmp_path / "data"), [{"name": "f1", **failing}, {"name": "f2", **failing}])
    result, _ = replay(engine, data)
    assert [r.status for r in result.rounds] == ["failed", "failed"] and len(result.failed_rounds) == 2
    assert {d.error for d in stored_decisions(engine)} == {
        "RuntimeError: provider answered 402 Payment Required"
    }
    with Session(engine) as session:
        assert {r.status for r in session.exec(select(RoundRow)).all()} == {"failed"}


def test_the_crowd_runs_after_the_others_with_their_stated_probabilities(
    engine: Engine, tmp_path: Path
) -> None:
    peers = [
        {
            "name": name,
            "kind": "scripted",
            "path": str(
                script(
                    tmp_path / f"{name}.jsonl",
                    [{"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "probability": p}],
                )
            ),
        }
        for name, p in (("alice", 0.9), ("bob", 0.8))
    ]
    # ``half`` states 0.5 everywhere: no information, so never a peer (with it the median would be 0.8).
    agents = [{"name": "crowd", "kind": "crowd"}, *peers, {"name": "half", "kind": "half"}]
    data = config(tiny_dataset(tmp_path / "data"), agents)
    data["schedule"] = {"every": "7d", "rounds": 1}
    replay(engine, data)
    crowd = stored_decisions(engine)[0]  # listed first, asked last
    assert crowd.status == "done" and crowd.probabilities_json == {
        A: {"YES": pytest.approx(0.85)}
    }  # the median of alice's 0.9 and bob's 0.8
    assert [(a["market_id"], a["outcome"]) for a in crowd.actions_json] == [
        (A, "YES")
    ]  # 0.85 vs a 0.40 price


# -- fill models ------------------------------------------------------------------------------------


def test_realistic_fills_refuse_markets_without_a_book(engine: Engine, tmp_path: Path) -> None:
    lines = [{"time": day(0).isoformat(), "market_id": A, "outcome": "YES", "amount": 100}]
    alice = {"name": "alice", "kind": "scripted", "path": str(script(tmp_path / "a.jsonl", lines))}
    data = config(tiny_dataset(tmp_path / "data"), [alice], fills={"model": "realistic"})
    replay(engine, data)
    decision = stored_decisions(engine)[0]
    assert decision.status == "rejected" and "no price for 'YES'" in (decision.error or "")
    with Session(engine) as session:
        assert session.exec(select(FillRow)).all() == []


def test_realistic_fills_buy_at_the_ask_sell_at_the_bid_and_pay_the_taker_fee() -> None:
    from markets.types import Market, PriceSnapshot, Venue

    market = Market(Venue.POLYMARKET, "x", "Will X?")
    book = PriceSnapshot(
        market.market_id,
        {"YES": D("0.41"), "NO": D("0.59")},
        day(0),
        "clob",
        bids={"YES": D("0.40"), "NO": D("0.58")},
        asks={"YES": D("0.42"), "NO": D("0.60")},
    )
    fills = parse_config(
        {"name": "x", "agents": [{"name": "h", "kind": "hold"}], "fills": {"model": "realistic"}}
    ).fills
    quotes = build_quotes(fills, [(market, book)], venue_of={market.market_id: Venue.POLYMARKET})
    assert (
        quotes.price(market.market_id, "YES", Side.BUY),
        quotes.price(market.market_id, "YES", Side.SELL),
    ) == (D("0.42"), D("0.40"))
    # fee = shares × 0.04 × p(1 − p) = (100 / 0.42) × 0.04 × 0.42 × 0.58 = 2.32
    assert taker_fee(fills.taker_fees[Venue.POLYMARKET], D("100"), D("0.42")) == D("2.32")
    ledger = Ledger(Rules(), "1")
    (buy,) = ledger.apply_decision([Bet(market.market_id, "YES", D("100"))], quotes, day(0), decision_id="d1")
    assert (buy.price, buy.fee, buy.shares) == (D("0.42"), D("2.32"), D("232.571428"))  # (100 − 2.32) / 0.42
    (sell,) = ledger.apply_decision([Sell(buy.position_id, D("50"))], quotes, day(1), decision_id="d2")
    # 116.285714 shares at the 0.40 bid = 46.514285 gross; fee 46.514285 × 0.04 × 0.60 = 1.116343 (up)
    assert (sell.price, sell.fee, sell.amount) == (D("0.40"), D("1.116343"), D("46.514285") - D("1.116343"))
    no_book = PriceSnapshot(market.market_id, {"YES": D("0.41"), "NO": D("0.59")}, day(0), "clob")
    bare = build_quotes(fills, [(market, no_book)], venue_of={market.market_id: Venue.POLYMARKET})
    with pytest.raises(DecisionRejected, match="no price"):
        Ledger(Rules(), "2").apply_decision(
            [Bet(market.market_id, "YES", D("100"))], bare, day(0), decision_id="d3"
        )


def test_mid_fills_trade_at_the_snapshot_price_without_fees(engine: Engine, tmp_path: Path) -> None:
    lines = [{"time": day(0).isoformat(), "market_id": B, "outcome": "NO", "amount": 300}]
    alice = {"name": "alice", "kind": "scripted", "path": str(script(tmp_path / "a.jsonl", lines))}
    replay(engine, config(tiny_dataset(tmp_path / "data"), [alice]))
    with Session(engine) as session:
        buy = session.exec(select(FillRow).where(FillRow.kind == "buy")).one()
    assert (buy.price, buy.fee, buy.shares) == (D("0.75"), D("0"), D("400"))


def test_rounds_run_against_the_snapshot_as_of_their_time(engine: Engine, tmp_path: Path) -> None:
    """A round re-run later still sees its own snapshot (same hash): prices after it never leak in."""
    cohort_id, source = launch_cohort(
        engine, config(tiny_dataset(tmp_path / "data"), [{"name": "h", "kind": "hold"}])
    )
    rt = runtime(engine, cohort_id, source)
    asyncio.run(run_round(rt, 1, day(7)))
    with Session(engine) as session:
        prices = {
            m: p for m, p in session.exec(select(RoundMarketRow.market_id, RoundMarketRow.prices_json)).all()
        }
    assert prices[A] == {"YES": "0.50", "NO": "0.50"}  # the day-14 price (0.60) is not known on day 7
