"""The loader against a real database (SQLite and PostgreSQL, migrated to head)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import polars as pl
import pytest
from sqlalchemy import Engine
from sqlmodel import select

from arena.db.engine import session_scope
from arena.db.models import AgentRow, CohortRow, DecisionRow, PortfolioSnapshotRow, ResolutionRow
from arena.engine.books.marks import record_closes
from arena.scoring import LoadError, leaderboard, load_frames
from tests.scoring.stored import BIN, MULTI, T0, VOID, populate


def test_loads_every_frame(engine: Engine) -> None:
    populate(engine)
    frames = load_frames(engine, ["c1"])

    agents = frames.agents.sort("agent")
    assert agents.select("agent", "agent_kind", "baseline").rows() == [
        ("hold", "hold", True),
        ("llm-1", "llm", False),
    ]
    assert agents["bankroll"].to_list() == [Decimal(5000), Decimal(5000)]

    fills = frames.fills.sort("filled_at")
    assert fills.select("kind", "venue", "category", "price").rows() == [
        ("buy", "polymarket", "politics", 0.4),
        ("settle", "polymarket", "politics", 1.0),
    ]
    assert fills["realized_pnl"].to_list() == [Decimal(0), Decimal(750)]  # a buy's null P/L reads as 0
    assert fills["max_bet"].to_list() == [Decimal(1250), None]

    assert dict(frames.resolutions.select("market_id", "winner").iter_rows()) == {BIN: "YES", MULTI: "B"}

    prices = frames.prices.sort("market_id", "observed_at", "outcome")
    assert prices.select("market_id", "outcome", "price").rows() == [
        (BIN, "YES", 0.4),  # the round's price wins over another source at the same instant
        (BIN, "YES", pytest.approx(0.45)),  # only NO was recorded: YES = 1 − NO
        (MULTI, "A", 0.2),
        (MULTI, "B", 0.5),
        (MULTI, "C", 0.3),
    ]

    forecasts = frames.forecasts.sort("market_id", "outcome")
    # NO 0.7 on a binary market is YES 0.3; the errored decision's probabilities are not used.
    assert forecasts.select("market_id", "outcome", "p").rows() == [
        (BIN, "YES", pytest.approx(0.3)),
        (MULTI, "A", 0.1),
        (MULTI, "B", 0.8),
    ]
    assert set(forecasts["stated_at"]) == {T0}

    decisions = frames.decisions.sort("agent", "decided_at")
    # The hold bot's round-1 decision is still only claimed: left out.
    assert decisions.select("agent", "error_kind", "tokens").rows() == [
        ("hold", None, 0),
        ("llm-1", None, 150),
        ("llm-1", "parse", 0),
    ]
    assert decisions["cost"].to_list()[1] == Decimal("0.0012345678")

    assert frames.snapshots.select("agent", "total_value").rows() == [("llm-1", Decimal(5750))]

    # The first round whose snapshot held each market (BIN in round 0, MULTI in round 1 only).
    assert frames.listings.sort("market_id").rows() == [
        ("c1", BIN, T0),
        ("c1", MULTI, T0 + timedelta(days=1)),
    ]

    # Every (round, outcome) offered, at the price shown in that round: binary markets by YES.
    # c1 was frozen without a [tournament] section: it ran without a hidden period, so shown.
    assert frames.offers.sort("market_id", "outcome").rows() == [
        ("c1", BIN, "YES", T0, 0.4, True),
        ("c1", MULTI, "A", T0 + timedelta(days=1), 0.2, True),
        ("c1", MULTI, "B", T0 + timedelta(days=1), 0.5, True),
        ("c1", MULTI, "C", T0 + timedelta(days=1), 0.3, True),
    ]
    # c1 is a replay cohort and llm-1 declares no knowledge_cutoff: the guard was off for it.
    assert frames.guards.rows() == [("c1", "llm-1", None, "off")]


def test_cohort_selection_and_scoring_end_to_end(engine: Engine) -> None:
    populate(engine)
    assert set(load_frames(engine).agents["cohort_id"]) == {"c1", "c2"}  # all cohorts by default
    only_c2 = load_frames(engine, ["c2"])
    assert only_c2.agents.select("agent", "bankroll").rows() == [
        ("llm-1", Decimal(10000))
    ]  # default bankroll
    assert only_c2.fills.is_empty() and only_c2.forecasts.is_empty()

    table = leaderboard(load_frames(engine, ["c1"]), replicates=100)
    llm = table.filter(pl.col("agent") == "llm-1").row(0, named=True)
    assert (llm["pnl"], llm["return_pct"]) == (Decimal(750), pytest.approx(15.0))
    assert llm["brier"] == pytest.approx((500 / 1250 - 1) ** 2)  # 40% confidence on YES, YES won
    assert llm["stated_events"] == 3  # bin YES, multi A and B
    assert (llm["decisions"], llm["valid_rate"]) == (2, 0.5)


def test_unknown_cohort_and_bad_payouts_are_clear_errors(engine: Engine) -> None:
    populate(engine)
    with pytest.raises(LoadError, match="no cohort with id 'nope'"):
        load_frames(engine, ["nope"])
    with session_scope(engine) as s:
        # A YES resolution whose payouts say NO won, on a market the LLM stated a probability for.
        s.add(
            ResolutionRow(
                market_id=VOID,
                kind="YES",
                payouts_json={"YES": "0", "NO": "1"},
                resolved_at=T0,
                detected_at=T0,
            )
        )
        (decision,) = [
            d for d in s.execute(select(DecisionRow)).scalars() if d.error is None and d.probabilities_json
        ]
        decision.probabilities_json = {**decision.probabilities_json, VOID: {"YES": 0.5}}
    with pytest.raises(
        LoadError, match=r"resolution of 'manifold:void': payouts_json .* do not fit kind YES"
    ):
        load_frames(engine, ["c1"])


def _intraday_marks(engine: Engine) -> None:
    """Three marks of llm-1 on T0+3d (09:00, 15:00, 23:30) beside the stored close at 00:00."""
    with session_scope(engine) as session:
        agent = session.exec(
            select(AgentRow).where(AgentRow.name == "llm-1", AgentRow.cohort_id == "c1")
        ).one()  # type: ignore[call-overload]
        for hours, value in ((9, 5800), (15, 5900), (23.5, 6000)):
            mark = {
                "agent_id": agent.id,
                "cohort_id": "c1",
                "marked_at": T0 + timedelta(days=3, hours=hours),
                "cash": Decimal(5750),
                "positions_value": Decimal(value - 5750),
                "total_value": Decimal(value),
                "realized_pnl": Decimal(750),
                "unrealized_pnl": Decimal(value - 5750),
            }
            session.add(PortfolioSnapshotRow(**mark))
            record_closes(session, [mark])


def test_marks_load_as_daily_closes_bounded_by_marks_until(engine: Engine) -> None:
    populate(engine)
    _intraday_marks(engine)
    llm = pl.col("agent") == "llm-1"
    day3 = T0 + timedelta(days=3)

    closes = load_frames(engine, ["c1"]).snapshots.filter(llm).sort("marked_at")
    assert closes.filter(pl.col("marked_at") >= day3).select("marked_at", "total_value").rows() == [
        (day3 + timedelta(hours=23.5), Decimal(6000))  # one row per day: its last mark
    ]
    midday = load_frames(engine, ["c1"], marks_until=day3 + timedelta(hours=16)).snapshots.filter(llm)
    assert midday.filter(pl.col("marked_at") >= day3)["total_value"].to_list() == [Decimal(5900)]


def test_a_frozen_tournament_config_that_cannot_be_read_is_named(engine: Engine) -> None:
    populate(engine)
    with session_scope(engine) as session:
        cohort = session.get(CohortRow, "c1")
        assert cohort is not None
        cohort.config_json = {**cohort.config_json, "tournament": {"reference": "crowd"}}
        session.add(cohort)
    with pytest.raises(LoadError) as caught:
        load_frames(engine, ["c1"])
    message = str(caught.value)
    assert "cohort 'c1' cannot be scored: tournament.reference: " in message and "\n" not in message


def test_windows_and_settings_come_from_the_frozen_config(engine: Engine) -> None:
    """c1 has rounds on days 0 and 1 and no schedule in its config: the cohort ends one default
    period (7 days) after its last round, day 8; no market has a close time, so windows end there.
    BIN is first offered in round 0, MULTI in round 1. Default settings: $1,000, market, no hidden period."""
    populate(engine)
    frames = load_frames(engine, ["c1"])
    assert frames.windows.sort("market_id").select(
        "market_id", "opens_at", "hidden_until", "closes_at"
    ).rows() == [
        (BIN, T0, T0, T0 + timedelta(days=8)),
        (MULTI, T0 + timedelta(days=1), T0 + timedelta(days=1), T0 + timedelta(days=8)),
    ]
    assert frames.tournaments.rows() == [("c1", Decimal(1000), "market", 0.0, 0.0)]


@pytest.mark.parametrize(
    ("config", "shown"),
    [
        # A hidden period: each market's first round falls in it (BIN day 0 of [0, 8], hidden
        # until day 4; MULTI day 1 of [1, 8], until day 4.5).
        ({"tournament": {"hidden_fraction": 0.5}}, [False, False]),
        # No hidden period, but the cohort never showed prices.
        ({"tournament": {"hidden_fraction": 0}, "price_visibility": "never"}, [False, False]),
        # Prices from day 1 on: BIN's round (day 0) hid them, MULTI's (day 1) showed them.
        ({"tournament": {"hidden_fraction": 0}, "price_visibility": {"after_days": 1}}, [False, True]),
    ],
)
def test_offers_say_whether_the_round_showed_the_price(
    engine: Engine, config: dict[str, object], shown: list[bool]
) -> None:
    populate(engine)
    with session_scope(engine) as session:
        cohort = session.get(CohortRow, "c1")
        assert cohort is not None
        cohort.config_json = {**cohort.config_json, **config, "start": T0.isoformat()}
        session.add(cohort)
    offers = load_frames(engine, ["c1"]).offers
    by_market = offers.group_by("market_id").agg(pl.col("shown").unique()).sort("market_id")
    assert by_market.rows() == [(BIN, [shown[0]]), (MULTI, [shown[1]])]
