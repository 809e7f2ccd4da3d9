"""Cohort configs: strict parsing, one-line errors naming the key, frozen effective config."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, select

from agents.registry import validate_agent
from arena.cohorts.config import ConfigError, config_from_frozen, load_config, parse_config
from arena.cohorts.launch import launch
from arena.cohorts.provider_limits import MAX_CONCURRENCY
from arena.core.clock import SimulatedClock
from arena.db.models import AgentRow, CohortRow
from markets.replay import ReplaySource
from tests.engine.helpers import config, tiny_dataset

HOLD = [{"name": "h", "kind": "hold"}]


def _error(data: dict[str, object]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(data, source="c.toml")
    return str(caught.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"name": "x", "agents": HOLD, "univers": {}}, "c.toml: univers: unknown key"),
        ({"name": "x", "agents": HOLD, "rules": {"bankrol": 5}}, "rules.bankrol: unknown key"),
        ({"name": "x", "agents": []}, "agents: "),
        ({"agents": HOLD}, "name: required key is missing"),
        (
            {"name": "x", "agents": HOLD, "schedule": {"every": "2w"}},
            "schedule.every: expected a positive duration like '7d'",
        ),
        (
            {"name": "x", "agents": HOLD, "schedule": {"rounds": 0}},
            "schedule.rounds: Input should be greater than or equal to 1",
        ),
        (
            {"name": "x", "agents": HOLD, "rules": {"max_bet_fraction": "1.5"}},
            "rules.max_bet_fraction: Input should be less than or equal to 1",
        ),
        (
            {"name": "x", "agents": HOLD, "start": "2025-01-01T00:00:00"},
            "start: date-time 2025-01-01T00:00:00 has no time zone",
        ),
        (
            {"name": "x", "agents": HOLD, "mode": "live"},
            "live cohorts need venue = 'polymarket' or 'manifold'",
        ),
        (
            {"name": "x", "agents": HOLD, "mode": "live", "venue": "polymarket"},
            "live cohorts need schedule.rounds",
        ),
        (
            {"name": "x", "agents": HOLD, "mode": "live", "venue": "kalshi", "schedule": {"rounds": 1}},
            "venue: Input should be 'polymarket' or 'manifold'",
        ),
        ({"name": "x", "agents": HOLD, "venue": "polymarket"}, "'venue' is only for live cohorts"),
        (
            {"name": "x", "agents": HOLD, "universe": {"min_price": "0.9", "max_price": "0.1"}},
            "min_price (0.9) must be below max_price (0.1)",
        ),
        (
            {"name": "x", "agents": HOLD, "fills": {"model": "best"}},
            "fills.model: Input should be 'mid' or 'realistic'",
        ),
        (
            {"name": "x", "agents": HOLD, "price_visibility": "sometimes"},
            "price_visibility.mode: Input should be 'always', 'never' or 'after_days'",
        ),
        (
            {"name": "x", "agents": [{"name": "a b", "kind": "hold"}]},
            "agents.0.name: String should match pattern",
        ),
        ({"name": "x", "agents": [*HOLD, *HOLD]}, "agent name 'h' is used twice"),
        (
            # The largest first bet is 1000 × 0.25 = 250, so a 251 minimum could never be met.
            {"name": "x", "agents": HOLD, "rules": {"bankroll": "1000", "min_bet": "251"}},
            "min_bet (251) is above the largest bet a full bankroll allows",
        ),
        (
            {"name": "x", "agents": HOLD, "tournament": {"reference": "median"}},
            "tournament.reference: Input should be 'market' or 'cohort_median'",
        ),
        (
            {"name": "x", "agents": HOLD, "tournament": {"prize_pool": 0}},
            "tournament.prize_pool: Input should be greater than 0",
        ),
        (
            {"name": "x", "agents": HOLD, "schedule": {"rounds": 2}, "tournament": {"hidden_fraction": 1.5}},
            "c.toml: tournament.hidden_fraction: Input should be less than or equal to 1",
        ),
        (
            {
                "name": "x",
                "agents": HOLD,
                "schedule": {"rounds": 2},
                "tournament": {"hidden_fraction": 0.3, "c_weight": -1},
            },
            "tournament.c_weight: Input should be greater than or equal to 0",
        ),
        (
            {"name": "x", "agents": HOLD, "tournament": {"hidden_fraction": 0, "s_weight": 0.5}},
            "tournament: s_weight (0.5) weighs a hidden period, but hidden_fraction is 0",
        ),
        (
            {
                "name": "x",
                "agents": HOLD,
                "schedule": {"rounds": 2},
                "tournament": {"hidden_fraction": 1, "c_weight": 0.5},
            },
            "tournament: c_weight (0.5) weighs a visible period, but hidden_fraction is 1",
        ),
        ({"name": "x", "agents": HOLD, "tournament": {"pool": 5}}, "tournament.pool: unknown key"),
    ],
)
def test_errors_name_the_key_and_what_was_expected(data: dict[str, object], expected: str) -> None:
    message = _error(data)
    assert expected in message and "\n" not in message


def test_defaults_are_filled_and_the_frozen_form_round_trips() -> None:
    cfg = parse_config({"name": "x", "agents": HOLD, "price_visibility": {"after_days": 3}})
    assert (cfg.dataset, cfg.schedule.every, cfg.rules.min_bet, cfg.fills.model) == (
        "data/forecastbench",
        timedelta(days=7),
        50,
        "mid",
    )
    assert cfg.price_visibility.mode == "after_days" and cfg.price_visibility.after_days == 3
    again = config_from_frozen(cfg.effective_json())
    assert again == cfg and again.config_hash() == cfg.config_hash()
    assert parse_config({"name": "x", "agents": HOLD, "seed": 1}).config_hash() != cfg.config_hash()


def test_tournament_defaults_hide_the_price_and_are_frozen_as_numbers() -> None:
    """By default the Metaculus rules' cure for the copier: 30% of each window hidden, coverage
    earned there only (c_weight 1), every moment of the score weighing the same (s_weight =
    hidden_fraction). Without a hidden period both weights default to 0. A replay without
    ``rounds`` may hide: its windows end when its data does."""
    plain = parse_config({"name": "x", "agents": HOLD}).tournament
    assert (plain.prize_pool, plain.reference, plain.hidden_fraction, plain.s_weight, plain.c_weight) == (
        1000.0,
        "market",
        0.3,
        0.3,
        1.0,
    )
    assert parse_config({"name": "x", "agents": HOLD}).schedule.rounds is None
    half = parse_config({"name": "x", "agents": HOLD, "tournament": {"hidden_fraction": 0.5}}).tournament
    assert (half.s_weight, half.c_weight) == (0.5, 1.0)
    none = parse_config({"name": "x", "agents": HOLD, "tournament": {"hidden_fraction": 0}}).tournament
    assert (none.s_weight, none.c_weight) == (0.0, 0.0)
    data = {
        "name": "x",
        "agents": HOLD,
        "schedule": {"rounds": 4},
        "tournament": {"hidden_fraction": 0.3, "c_weight": 0.5},
    }
    cfg = parse_config(data)
    assert (cfg.tournament.s_weight, cfg.tournament.c_weight) == (0.3, 0.5)
    assert '"s_weight":0.3' in cfg.effective_json() and config_from_frozen(cfg.effective_json()) == cfg


def test_a_config_frozen_before_the_tournament_section_ran_without_a_hidden_period() -> None:
    """Read back, a frozen config without ``tournament`` keeps what it ran with (no hidden period),
    never today's defaults: its rounds showed every price, and scoring must say so."""
    older = parse_config({"name": "x", "agents": HOLD}).model_dump(mode="json")
    del older["tournament"]
    tournament = config_from_frozen(older).tournament
    assert (tournament.hidden_fraction, tournament.s_weight, tournament.c_weight) == (0.0, 0.0, 0.0)


def test_tournament_window_ends_at_the_close_or_the_cohort_end() -> None:
    """Opened day 0, 30% hidden: closing on day 10 hides until day 3; no close (or a close after the
    cohort's day-20 end) ends at day 20 and hides until day 6; a close before the opening: empty."""
    t = parse_config(
        {"name": "x", "agents": HOLD, "schedule": {"rounds": 2}, "tournament": {"hidden_fraction": 0.3}}
    ).tournament
    d0, day = datetime(2025, 1, 1, tzinfo=UTC), timedelta(days=1)
    assert t.window(d0, d0 + 10 * day, d0 + 20 * day).hidden_until == d0 + 3 * day
    for close in (None, d0 + 30 * day):
        w = t.window(d0, close, d0 + 20 * day)
        assert (w.hidden_until, w.closes_at) == (d0 + 6 * day, d0 + 20 * day)
    w = t.window(d0, d0 - day, d0 + 20 * day)
    assert (w.opens_at, w.hidden_until, w.closes_at) == (d0, d0, d0)


def test_toml_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"missing\.toml: file not found"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"bad\.toml: not valid TOML"):
        load_config(bad)


def test_the_example_configs_parse() -> None:
    folder = Path(__file__).resolve().parents[2] / "data" / "configs"
    names = {p.name: load_config(p) for p in folder.glob("*.toml")}
    assert {
        "demo-baselines.toml",
        "replay-with-llm.toml",
        "live-polymarket.toml",
        "researcher.toml",
    } <= names.keys()
    assert names["live-polymarket.toml"].fills.model == "realistic"
    researcher = names["researcher.toml"]
    assert researcher.agents[0].settings["tools"]["enabled"] is True
    validate_agent("llm", researcher.agents[0].settings, environ={"OPENROUTER_API_KEY": "k"})


def _launch(
    engine: Engine, tmp_path: Path, agents: list[dict[str, object]], environ: dict[str, str] | None = None
) -> str:
    dataset = tiny_dataset(tmp_path / "data")
    cfg = parse_config(config(dataset, agents))
    source = ReplaySource.from_directory(dataset)
    return launch(
        engine,
        cfg,
        source=source,
        environ=environ or {},
        clock=SimulatedClock(datetime(2026, 1, 1, tzinfo=UTC)),
    ).cohort_id


@pytest.mark.parametrize(
    ("agent", "expected"),
    [
        ({"name": "g", "kind": "gpt"}, "agents[0] (g): unknown agent kind 'gpt'"),
        (
            {"name": "r", "kind": "random", "stakee": 3},
            "agents[0] (r): random settings: stakee: unknown setting",
        ),
        (
            {"name": "l", "kind": "llm", "model": "openai/gpt-4o-mini"},
            "agents[0] (l): llm settings: api_key_env: environment variable 'OPENROUTER_API_KEY' is not set",
        ),
        (
            {"name": "s", "kind": "scripted", "path": "/nonexistent.jsonl"},
            "agents[0] (s): /nonexistent.jsonl: cannot read scripted decisions",
        ),
    ],
)
def test_agent_problems_fail_the_launch_and_write_nothing(
    engine: Engine, tmp_path: Path, agent: dict[str, object], expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _launch(engine, tmp_path, [agent])
    assert expected in str(caught.value)
    with Session(engine) as session:
        assert session.exec(select(CohortRow)).all() == []


def test_a_present_key_passes_and_never_reaches_the_database(engine: Engine, tmp_path: Path) -> None:
    secret = "sk-or-test-123456"
    agent = {"name": "l", "kind": "llm", "model": "openai/gpt-4o-mini", "knowledge_cutoff": "2023-10-01"}
    cohort_id = _launch(engine, tmp_path, [agent], {"OPENROUTER_API_KEY": secret})
    with Session(engine) as session:
        cohort = session.get(CohortRow, cohort_id)
        (row,) = session.exec(select(AgentRow)).all()
    assert (
        cohort is not None and secret not in str(cohort.config_json) and secret not in str(row.settings_json)
    )
    assert row.model_id == "openai/gpt-4o-mini" and row.settings_json["knowledge_cutoff"] == "2023-10-01"


def test_launch_freezes_the_effective_config(engine: Engine, tmp_path: Path) -> None:
    cohort_id = _launch(engine, tmp_path, HOLD)
    with Session(engine) as session:
        cohort = session.get(CohortRow, cohort_id)
    assert cohort is not None and cohort.status == "pending"
    frozen = config_from_frozen(cohort.config_json)
    assert frozen.start == datetime(2025, 1, 1, tzinfo=UTC)  # as given; absent, the dataset's first instant
    assert cohort.config_hash == frozen.config_hash()
    assert frozen.universe.max_markets == 50 and frozen.marks.stale_after_days == 30  # defaults made explicit


def test_a_start_after_the_data_ends_is_refused(engine: Engine, tmp_path: Path) -> None:
    dataset = tiny_dataset(tmp_path / "data")
    cfg = parse_config(config(dataset, HOLD, start="2030-01-01T00:00:00Z"))
    with pytest.raises(
        ConfigError, match=r"start: 2030-01-01T00:00:00\+00:00 is after the dataset's last instant"
    ):
        launch(
            engine,
            cfg,
            source=ReplaySource.from_directory(dataset),
            environ={},
            clock=SimulatedClock(datetime(2026, 1, 1, tzinfo=UTC)),
        )


def test_a_start_before_the_data_begins_is_refused(engine: Engine, tmp_path: Path) -> None:
    dataset = tiny_dataset(tmp_path / "data")
    source = ReplaySource.from_directory(dataset)
    assert source.start is not None
    early = source.start - timedelta(days=1)
    cfg = parse_config(config(dataset, HOLD, start=early.isoformat()))
    with pytest.raises(ConfigError, match=r"is before the dataset's first price"):
        launch(engine, cfg, source=source, environ={}, clock=SimulatedClock(datetime(2026, 1, 1, tzinfo=UTC)))
    with Session(engine) as session:
        assert session.exec(select(CohortRow)).all() == []


def test_sections_added_later_keep_older_cohorts_hashes() -> None:
    """A cohort frozen before the later sections (tournament, scoring, prices, tools, budget,
    llm_limits) existed still verifies: those sections are left out of the hash while in the form
    they had when added (the tournament without a hidden period: its defaults have changed since),
    and count once set. Today's default tournament hides prices, so it counts."""
    cfg = parse_config({"name": "x", "agents": HOLD, "tournament": {"hidden_fraction": 0}})
    assert parse_config({"name": "x", "agents": HOLD}).config_hash() != cfg.config_hash()
    frozen = cfg.model_dump(mode="json")
    later = ("tournament", "scoring", "prices", "tools", "budget", "llm_limits")
    older = {k: v for k, v in frozen.items() if k not in later}
    older["schedule"] = {k: v for k, v in frozen["schedule"].items() if k != "catch_up_grace"}
    older_hash = hashlib.sha256(json.dumps(older, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert config_from_frozen(older).config_hash() == older_hash == cfg.config_hash()
    tuned = parse_config({"name": "x", "agents": HOLD, "scoring": {"implied": "kelly"}})
    assert tuned.config_hash() != cfg.config_hash()
    limited = parse_config({"name": "x", "agents": HOLD, "llm_limits": {"max_in_flight": 4}})
    assert limited.config_hash() != cfg.config_hash()
    researching = parse_config({"name": "x", "agents": HOLD, "tools": {"corpus": "news"}})
    assert researching.config_hash() != cfg.config_hash()
    capped = parse_config({"name": "x", "agents": HOLD, "budget": {"max_cost_usd": "5"}})
    assert capped.config_hash() != cfg.config_hash()


def test_settings_added_later_at_their_defaults_keep_the_first_release_hashes() -> None:
    """Hashes computed before ``[prices]`` and ``schedule.catch_up_grace`` existed (pinned from
    that code) still match; setting either changes the hash."""
    # concurrency 8: the first release's default, frozen into every cohort it launched; no hidden
    # period: the tournament's form when it was added (today's default hides prices).
    replay = {
        "name": "x",
        "agents": [{"name": "hold", "kind": "hold"}],
        "concurrency": 8,
        "tournament": {"hidden_fraction": 0},
    }
    live = {
        **replay,
        "mode": "live",
        "venue": "polymarket",
        "start": "2026-01-01T00:00:00Z",
        "schedule": {"every": "1d", "rounds": 3},
    }
    assert (
        parse_config(replay).config_hash()
        == "1786ea02b153dc94bf1b71a88df99f104f63fbc472de306a0e7a17d54e442c55"
    )
    assert (
        parse_config(live).config_hash() == "965c13eff215949956dacc1af024f326776517f459f91c0d0d0a4b0246d9b568"
    )
    graced = {**live, "schedule": {"every": "1d", "rounds": 3, "catch_up_grace": "2h"}}
    assert parse_config(graced).config_hash() != parse_config(live).config_hash()
    aged = {**live, "prices": {"mark_max_age": "3d"}}
    assert parse_config(aged).config_hash() != parse_config(live).config_hash()
    assert config_from_frozen(parse_config(aged).effective_json()).prices.mark_max_age == timedelta(days=3)


def test_a_round_asks_every_agent_at_once_up_to_the_cap() -> None:
    cfg = parse_config({"name": "x", "agents": HOLD})
    assert cfg.concurrency == MAX_CONCURRENCY == 256
    assert (cfg.llm_limits.requests_per_second, cfg.llm_limits.max_in_flight) == (100, 128)
    with pytest.raises(ConfigError, match="concurrency"):
        parse_config({"name": "x", "agents": HOLD, "concurrency": MAX_CONCURRENCY + 1})
    with pytest.raises(ConfigError, match=r"llm_limits\.requests_per_second"):
        parse_config({"name": "x", "agents": HOLD, "llm_limits": {"requests_per_second": 0}})
    with pytest.raises(ConfigError, match=r"llm_limits\.burst"):
        parse_config({"name": "x", "agents": HOLD, "llm_limits": {"burst": 5}})
