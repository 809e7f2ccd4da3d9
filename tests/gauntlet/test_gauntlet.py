"""The gauntlet: every default view crowns skill, not a trick (docs/gauntlet.md).

One replay of the gauntlet cohort (the demo's config, its baselines and the strategies of
``tests/gauntlet/strategies.py``) feeds every assertion. For each view (the CLI table, the JSON,
the dashboard's leaderboard page, the report; ``tests/gauntlet/views.py``):

- the positive control (``informed``) ranks first, alone, in the default order and on every
  stated-forecast and tournament headline (``HEADLINES``);
- on each metric a negative control is built to game (``cohort.NEGATIVE``), it neither ranks
  first, nor ranks above ``market`` (where ``market`` has that metric), nor carries a favourable
  label (Perfect, Excellent, Good, Exceptional), unless the view flags it visibly and says why:
  a note naming it (the CLI's footnote under a mark on its row, the JSON's ``footnotes``, the
  dashboard's and the report's notes) or FAILED.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from sqlmodel import Session, col, create_engine, select
from typer.testing import CliRunner

from agents.types import AgentView, PortfolioView
from arena.cli import app
from arena.db.models import AgentRow, CohortRow, DecisionRow, FillRow, MarketRow
from arena.scoring import SORTABLE
from markets.replay import BUNDLED_DATASET_DIR, ReplaySource
from markets.types import MarketSnapshot
from portfolio import Rules
from tests.gauntlet.cohort import NEGATIVE, POSITIVE, replay_gauntlet
from tests.gauntlet.strategies import HiddenCopier
from tests.gauntlet.views import DEFAULT, DashboardView, JsonView, ReportView, TableView

HEADLINES = ("stated_brier_imputed", "log_score_imputed", "tournament_take", "tournament_score")
LABELS = {"brier": "brier_label", "brier_kelly": "brier_label_kelly", "return_pct": "return_label"}
FAVOURABLE = frozenset({"Perfect", "Excellent", "Good", "Exceptional"})
VIEWS = ("table", "json", "dashboard", "report")


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """The gauntlet replayed into a new SQLite file, and its report's Markdown: (url, markdown)."""
    directory = tmp_path_factory.mktemp("gauntlet")
    url = replay_gauntlet(directory)
    with Session(create_engine(url)) as session:
        (cohort_id,) = session.exec(select(CohortRow.id)).all()
    out = directory / "report"
    done = CliRunner().invoke(app, ["report", cohort_id, "--out", str(out), "--database-url", url])
    assert done.exit_code == 0, done.output
    return url, (out / "report.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def views(replayed: tuple[str, str]) -> dict[str, Any]:
    url, markdown = replayed
    return {
        "table": TableView(url),
        "json": JsonView(url),
        "dashboard": DashboardView(url),
        "report": ReportView(url, markdown),
    }


def _first(ranking: list[tuple[int | None, str]]) -> list[str]:
    return [agent for rank, agent in ranking if rank == 1]


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("metric", [DEFAULT, *HEADLINES])
def test_the_positive_control_ranks_first_alone(views: dict[str, Any], view: str, metric: str) -> None:
    ranking = views[view].ranking(metric)
    assert _first(ranking) == [POSITIVE], f"{view}, ranked by {metric}: {ranking[:4]}"
    assert ranking[0][1] == POSITIVE  # and it heads the rows the view shows


def _gamed() -> list[Any]:
    cases = []
    for view in VIEWS:
        for control, metrics in NEGATIVE.items():
            for metric in metrics:
                cases.append(pytest.param(view, control, metric, id=f"{view}-{control}-{metric}"))
    return cases


@pytest.mark.parametrize(("view", "control", "metric"), _gamed())
def test_no_negative_control_wins_the_metric_it_games(
    views: dict[str, Any], view: str, control: str, metric: str
) -> None:
    shown = views[view]
    if shown.flagged(control):
        return  # flagged visibly, with the reason: a reader is told not to trust that standing
    ranking = shown.ranking(metric)
    assert control not in _first(ranking), f"{view}: {control} ranks first by {metric}, unflagged"
    mine, market = shown.value(control, metric), shown.value("market", metric)
    if mine is not None and market is not None:
        better = mine > market if SORTABLE[metric] else mine < market
        assert not better, f"{view}: {control} ({mine}) above market ({market}) by {metric}, unflagged"
    label = shown.label(control, LABELS[metric]) if metric in LABELS else None
    assert label not in FAVOURABLE, f"{view}: {control} reads {label} on {metric}, unflagged"


def test_the_closed_market_trader_never_trades_a_closed_market(replayed: tuple[str, str]) -> None:
    url, _ = replayed
    with Session(create_engine(url)) as session:
        fills = session.exec(
            select(FillRow.filled_at, MarketRow.close_time)
            .join(MarketRow, col(MarketRow.id) == col(FillRow.market_id))
            .join(AgentRow, col(AgentRow.id) == col(FillRow.agent_id))
            .where(AgentRow.name == "closed-trader", col(FillRow.kind).in_(("buy", "sell")))
        ).all()
        refused = session.exec(
            select(DecisionRow.error)
            .join(AgentRow, col(AgentRow.id) == col(DecisionRow.agent_id))
            .where(AgentRow.name == "closed-trader", DecisionRow.status == "rejected")
        ).all()
    assert fills and all(close is not None and at < close for at, close in fills)
    # it tried: each refusal names a market closed at the round (with its close time) or, for a
    # closed market the cohort never offered, a market unknown to it
    assert len(refused) >= 10
    reasons = [e or "" for e in refused]
    assert all("a closed market is not traded" in e or "unknown market" in e for e in reasons)
    assert sum("a closed market is not traded" in e for e in reasons) >= 5


def test_every_strategy_took_part(views: dict[str, Any]) -> None:
    """Not vacuous: every control is on the board, and each did what it is built to do."""
    board = views["json"]
    assert {a for _, a in board.ranking(DEFAULT)} >= {POSITIVE, "market", *NEGATIVE}
    assert board.value(POSITIVE, "imputed_share") == 0 and board.value(POSITIVE, "bets") > 100
    # an agent that never states has no stated score at all, not the market's imputed one
    assert board.value("silent", "stated_brier_imputed") is None
    # the copier states wherever a price is shown (hidden rounds show none: imputed there)
    assert board.value("copier", "unstated_share") == 0 and board.value("copier", "imputed_share") > 0
    assert board.value("longshot-dust", "resolved_markets") >= 30  # past the few-markets flag
    assert board.value("cherry-picker", "stated_events") == 1


def test_the_hidden_copier_restates_the_recorded_price_where_the_round_hides_it() -> None:
    """Where a round hides a market's price (the tournament's hidden period), the hidden copier
    states the recorded one all the same: the reference an honest agent cannot see."""
    at = datetime(2025, 10, 6, tzinfo=UTC)
    shown = ReplaySource.from_directory(BUNDLED_DATASET_DIR).snapshot(at).entries[:5]
    hidden = tuple(replace(e, price=replace(e.price, prices={})) for e in shown)
    view = AgentView(
        agent_id="hidden-copier",
        cohort_id="c",
        round_index=0,
        now=at,
        rules=Rules(),
        portfolio=PortfolioView(cash=Decimal(10000), max_bet=Decimal(2500)),
        snapshot=MarketSnapshot(at, hidden),
    )
    stated = asyncio.run(HiddenCopier("hidden-copier").decide(view)).probabilities
    recorded = {e.market.market_id: {"YES": float(e.price.prices["YES"])} for e in shown}
    assert len(recorded) == 5 and stated == recorded
