"""The agent registry: every kind builds, every bad setting is caught with a message naming its key,
and an API key goes from the environment to the LLM bettor only."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from agents.baselines.favorite import FavoriteBettor
from agents.baselines.momentum_kelly import MomentumKellyBettor
from agents.baselines.passive import HoldBettor, MarketBettor
from agents.baselines.random_bets import RandomBettor
from agents.crowd import CrowdBettor
from agents.registry import KINDS, AgentConfigError, build_bettor, model_identity, validate_agent
from agents.scripted import ScriptedBettor
from agents.types import Bettor
from tests.agents.test_baselines_builders import decide, entry, view

KEY = "sk-test-0123456789abcdef"
NO_ENV: dict[str, str] = {}


def _error(kind: str, settings: dict[str, object], environ: dict[str, str] = NO_ENV) -> str:
    with pytest.raises(AgentConfigError) as raised:
        validate_agent(kind, settings, environ=environ)
    return str(raised.value)


def test_the_known_kinds() -> None:
    expected = {
        "hold",
        "market",
        "half",
        "random",
        "favorite",
        "contrarian",
        "kelly",
        "crowd",
        "llm",
        "plugin",
        "scripted",
        "external",
    }
    assert set(KINDS) == expected


def test_an_external_forecaster_is_never_built_or_launched_but_has_an_identity() -> None:
    settings = {"source": "panel.csv", "forecaster": "ann"}
    for attempt in (
        lambda: validate_agent("external", settings, environ={}),
        lambda: build_bettor("ann", "external", settings, seed=0, environ={}, new_http_client=None),
    ):
        with pytest.raises(AgentConfigError, match=r"imported .* never launched"):
            attempt()
    assert model_identity("external", settings) == "external (forecaster ann, source panel.csv)"
    assert "did you mean 'forecaster'?" in _error("external", {"source": "x", "forecastr": "a"})


def test_unknown_kind_lists_the_known_ones() -> None:
    message = _error("kelley", {})
    assert message.startswith("unknown agent kind 'kelley'; known kinds: hold, market, half, random")
    assert "scripted" in message


@pytest.mark.parametrize(
    ("kind", "settings", "expected"),
    [
        (
            "favorite",
            {"fracton": 0.1},
            "favorite settings: fracton: unknown setting (known: fraction, max_markets); "
            "did you mean 'fraction'?",
        ),
        ("hold", {"x": 1}, "hold settings: x: unknown setting (known: none)"),
        (
            "favorite",
            {"fraction": 3},
            "favorite settings: fraction: Input should be less than or equal to 1 (got 3)",
        ),
        (
            "random",
            {"max_bets": -1},
            "random settings: max_bets: Input should be greater than or equal to 0 (got -1)",
        ),
        (
            "kelly",
            {"lookback_days": 0, "edge_threshold": 1},
            "kelly settings: edge_threshold: Input should be less than 1 (got 1); "
            "lookback_days: Input should be greater than or equal to 1 (got 0)",
        ),
        (
            "crowd",
            {"min_peers": 0},
            "crowd settings: min_peers: Input should be greater than or equal to 1 (got 0)",
        ),
        ("scripted", {}, "scripted settings: path: required setting is missing"),
        (
            "plugin",
            {},
            "plugin settings: settings: give exactly one of 'path' (\"pkg.module:Class\") or 'entry_point'",
        ),
        ("llm", {}, "llm settings: model: required setting is missing"),
    ],
)
def test_bad_settings_name_the_key_and_what_was_expected(
    kind: str, settings: dict[str, object], expected: str
) -> None:
    assert _error(kind, settings, {"OPENROUTER_API_KEY": KEY}) == expected


def test_string_values_are_never_echoed_they_may_be_secrets() -> None:
    message = _error("crowd", {"method": KEY})
    expected = "Input should be 'median', 'mean', 'geo_mean' or 'geo_mean_odds'"
    assert message == f"crowd settings: method: {expected}"
    leaked = _error("llm", {"model": "m", "api_key": KEY}, {"OPENROUTER_API_KEY": KEY})
    assert "api_key: unknown setting" in leaked and KEY not in leaked
    assert KEY not in _error("llm", {"model": "m", "api_key_env": KEY})


def test_llm_needs_its_key_variable_unless_the_server_is_local() -> None:
    message = _error("llm", {"model": "openai/gpt-4o-mini", "api_key_env": "MY_LLM_KEY"}, {"OTHER": "x"})
    assert message.startswith("llm settings: api_key_env: environment variable 'MY_LLM_KEY' is not set")
    assert "https://openrouter.ai/api/v1" in message
    assert _error("llm", {"model": "m", "api_key_env": None}).startswith(
        "llm settings: api_key_env: 'api_key_env' is empty"
    )
    validate_agent("llm", {"model": "m", "api_key_env": "MY_LLM_KEY"}, environ={"MY_LLM_KEY": KEY})
    for local in ("http://localhost:11434/v1", "http://127.0.0.1:8000/v1", "http://[::1]:8000/v1"):
        validate_agent("llm", {"model": "llama3", "base_url": local}, environ=NO_ENV)


@pytest.mark.parametrize(
    ("kind", "settings", "cls", "uses_peers"),
    [
        ("hold", {}, HoldBettor, False),
        ("market", {}, MarketBettor, False),
        ("random", {"max_bets": 3}, RandomBettor, False),
        ("favorite", {"fraction": 0.1}, FavoriteBettor, False),
        ("contrarian", {}, FavoriteBettor, False),
        ("kelly", {"kelly_fraction": 0.5}, MomentumKellyBettor, False),
        ("crowd", {"method": "geo_mean_odds"}, CrowdBettor, True),
    ],
)
def test_builds_each_rule_based_kind(
    kind: str, settings: dict[str, object], cls: type, uses_peers: bool
) -> None:
    validate_agent(kind, settings, environ=NO_ENV)
    bettor = build_bettor("agent-x", kind, settings, seed=1, environ=NO_ENV, new_http_client=None)
    assert isinstance(bettor, cls) and isinstance(bettor, Bettor)
    assert bettor.name == "agent-x" and bettor.uses_peers is uses_peers


def test_contrarian_is_favorite_reversed_and_random_follows_the_cohort_seed() -> None:
    agent_view = view(entry("a", "0.7"), entry("b", "0.2"), entry("c", "0.6"), round_index=3)
    fav = decide(build_bettor("f", "favorite", {}, seed=0, environ=NO_ENV, new_http_client=None), agent_view)
    con = decide(
        build_bettor("f", "contrarian", {}, seed=0, environ=NO_ENV, new_http_client=None), agent_view
    )
    assert [(a.market_id, a.outcome) for a in fav.actions] != [(a.market_id, a.outcome) for a in con.actions]
    assert [a.market_id for a in fav.actions] == [a.market_id for a in con.actions]

    def random_decision(seed: int) -> object:
        return decide(
            build_bettor("r", "random", {}, seed=seed, environ=NO_ENV, new_http_client=None), agent_view
        ).actions

    assert random_decision(5) == random_decision(5) != random_decision(6)


def test_scripted_kind_checks_its_file_at_validation(tmp_path: Path) -> None:
    path = tmp_path / "picks.jsonl"
    good = '{"time": "2025-03-01T00:00:00Z", "market_id": "polymarket:a", "outcome": "YES", "amount": 60}\n'
    path.write_text(good + '{"time": "x"}\n')
    assert _error("scripted", {"path": str(path)}).startswith(f"{path}:2: ")
    path.write_text(
        '{"time": "2025-03-01T00:00:00Z", "market_id": "polymarket:a", "outcome": "YES", "amount": 60}\n'
    )
    validate_agent("scripted", {"path": str(path)}, environ=NO_ENV)
    assert isinstance(
        build_bettor("s", "scripted", {"path": str(path)}, seed=0, environ=NO_ENV, new_http_client=None),
        ScriptedBettor,
    )


def test_plugin_kind_checks_import_and_settings_before_building(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    good = {"path": "plugin_example.bettor:CheapYesBettor", "settings": {"threshold": 0.5}}
    validate_agent("plugin", good, environ=NO_ENV)
    bettor = build_bettor("mine", "plugin", good, seed=9, environ=NO_ENV, new_http_client=None)
    assert bettor.name == "mine" and decide(bettor, view(entry("a", "0.4"))).actions
    typo = _error("plugin", {"path": "plugin_example.bettor:CheapYesBettor", "settings": {"treshold": 0.5}})
    assert "plugin 'plugin_example.bettor:CheapYesBettor': settings do not fit CheapYesBettor(" in typo
    assert "'treshold'" in typo
    assert "No module named 'nowhere'" in _error("plugin", {"path": "nowhere:Bot"})
    assert "not found in group 'bettor_arena.bettors'" in _error("plugin", {"entry_point": "nope"})
    assert "give exactly one of" in _error("plugin", {"path": "a:B", "entry_point": "b"})


def test_llm_build_needs_an_http_client() -> None:
    with pytest.raises(AgentConfigError, match="needs new_http_client"):
        build_bettor(
            "gpt", "llm", {"model": "m"}, seed=0, environ={"OPENROUTER_API_KEY": KEY}, new_http_client=None
        )


def test_each_llm_agent_gets_a_client_of_its_own_and_other_kinds_none() -> None:
    made: list[httpx.AsyncClient] = []

    def new_client() -> httpx.AsyncClient:
        made.append(httpx.AsyncClient())
        return made[-1]

    env = {"OPENROUTER_API_KEY": KEY}
    for name in ("a", "b"):
        build_bettor(name, "llm", {"model": "m"}, seed=0, environ=env, new_http_client=new_client)
    build_bettor("h", "hold", {}, seed=0, environ=env, new_http_client=new_client)
    assert len(made) == 2 and made[0] is not made[1]


@pytest.mark.anyio
async def test_the_api_key_reaches_the_provider_and_nothing_else() -> None:
    seen: list[httpx.Request] = []

    def provider(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500, json={"error": {"message": "boom"}})

    settings = {
        "model": "openai/gpt-4o-mini",
        "base_url": "https://llm.example/v1",
        "api_key_env": "MY_KEY",
        "transport_retries": 0,
    }
    async with httpx.AsyncClient(transport=httpx.MockTransport(provider)) as client:
        bettor = build_bettor(
            "gpt", "llm", settings, seed=0, environ={"MY_KEY": KEY}, new_http_client=lambda: client
        )
        decision = await bettor.decide(view(entry("a", "0.4")))
    assert seen and seen[0].headers["authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(bettor) and KEY not in json.dumps(settings)
    assert KEY not in repr(decision)


@pytest.mark.anyio
async def test_a_local_llm_server_gets_no_key() -> None:
    seen: list[httpx.Request] = []

    def provider(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500, json={})

    settings = {"model": "llama3", "base_url": "http://127.0.0.1:8080/v1", "transport_retries": 0}
    async with httpx.AsyncClient(transport=httpx.MockTransport(provider)) as client:
        bettor = build_bettor(
            "local", "llm", settings, seed=0, environ=NO_ENV, new_http_client=lambda: client
        )
        await bettor.decide(view(entry("a", "0.4")))
    assert seen and "authorization" not in seen[0].headers
