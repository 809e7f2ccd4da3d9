"""Fuzzing the cohort config schema, TOML to launch: every config either launches (exit 0, one
cohort written) or is refused in one line naming its field (exit 2, nothing written). Never a
traceback, never another exit code, never a cohort half-written.

A valid config is mutated at one to three keys of the schema (sections, agent settings and
unknown keys), with values chosen to break things: huge and negative numbers, NaN and
infinities, amounts with many places, durations of a billion days, dates in year 1, wrong types,
long and odd strings. Derandomized, so a run is reproducible; about 150 launches (< ~30 s).
"""

from __future__ import annotations

import json
import math
import shutil
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import CohortRow
from tests.engine.helpers import tiny_dataset

PATHS = (
    "name",
    "mode",
    "venue",
    "start",
    "seed",
    "schedule.every",
    "schedule.rounds",
    "schedule.catch_up_grace",
    "rules.bankroll",
    "rules.min_bet",
    "rules.max_bet_fraction",
    "universe.max_markets",
    "universe.min_volume",
    "universe.min_days_to_close",
    "universe.max_days_to_close",
    "universe.min_price",
    "universe.order_by",
    "fills.model",
    "fills.taker_fees.polymarket.rate",
    "price_visibility",
    "tournament.prize_pool",
    "tournament.hidden_fraction",
    "marks.every",
    "marks.stale_after_days",
    "prices.mark_max_age",
    "scoring.implied",
    "tools.news_lag",
    "budget.max_cost_usd",
    "concurrency",
    "llm_limits.requests_per_second",
    "llm_limits.max_pause_s",
    "call_timeout",
    "round_budget",
    "unknown_key",
    "rules.unknown",
    "agents.0.kind",
    "agents.1.timeout_s",
    "agents.1.max_wait_s",
    "agents.1.max_response_bytes",
    "agents.1.usd_per_mtok_input",
    "agents.1.budget.max_cost_usd",
    "agents.1.extra_headers",
    "agents.1.base_url",
    "agents.1.temperature",
    "agents.2.stake_fraction",
)
HOSTILE_TEXT = (
    "1e400",
    "-1",
    "0",
    "NaN",
    "inf",
    "10000.123456789123456789",
    "7d",
    "1s",
    "0s",
    "99999999999d",
    "36501d",
    "",
    "https://user:pw@llm.example/v1?api_key=sk-abc",
    "env:",
    "x" * 2000,
)
SCALARS = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.text(max_size=40),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.sampled_from([10**11, 2**31, -7, 0, 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e11, 1e308, -0.0, 0.5]),
    st.booleans(),
    st.sampled_from([datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC), date(2025, 1, 3)]),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(SCALARS, max_size=3),
    st.dictionaries(st.sampled_from(["every", "Cookie", "X-Title", "after_days", "a"]), SCALARS, max_size=2),
)


def base_config(dataset: Path) -> dict[str, Any]:
    return {
        "name": "fuzz",
        "dataset": str(dataset),
        "schedule": {"every": "7d", "rounds": 2},
        "agents": [
            {"name": "hold", "kind": "hold"},
            {
                "name": "llm",
                "kind": "llm",
                "model": "m",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": "",
            },
            {"name": "fav", "kind": "favorite"},
        ],
    }


def mutated(config: dict[str, Any], path: str, value: Any) -> None:
    """``config`` with ``value`` at the dotted ``path`` (list indices are numbers); a section that
    is not a table is replaced by one."""
    keys = path.split(".")
    node: Any = config
    for key in keys[:-1]:
        if isinstance(node, list):
            node = node[int(key)]
            continue
        if not isinstance(node.get(key), dict | list):
            node[key] = {}
        node = node[key]
    node[keys[-1]] = value


def toml_value(value: Any) -> str:
    """``value`` as TOML (inline tables and arrays; what ``tomllib`` cannot read is the config's problem)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items()) + "}"


@pytest.fixture(scope="module")
def world(sqlite_head: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("fuzz")
    shutil.copyfile(sqlite_head, folder / "arena.db")
    return tiny_dataset(folder / "data"), f"sqlite:///{folder / 'arena.db'}"


def cohorts(url: str) -> int:
    with Session(make_engine(url)) as session:
        return session.exec(select(func.count()).select_from(CohortRow)).one()


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(changes=st.lists(st.tuples(st.sampled_from(PATHS), VALUES), min_size=1, max_size=3))
def test_a_config_launches_or_is_refused_in_one_line_naming_its_field(
    world: tuple[Path, str], changes: list[tuple[str, Any]]
) -> None:
    dataset, url = world
    config = base_config(dataset)
    for path, value in changes:
        mutated(config, path, value)
    text = "\n".join(f"{json.dumps(key)} = {toml_value(value)}" for key, value in config.items())
    file = dataset.parent / "fuzz.toml"
    file.write_text(text, encoding="utf-8")
    before = cohorts(url)
    result = CliRunner().invoke(app, ["cohort", "launch", str(file), "--database-url", url])
    after = cohorts(url)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.output.strip().splitlines()
    if result.exit_code == 0:
        assert after == before + 1 and lines[0].startswith("Launched cohort"), result.output
        return
    assert result.exit_code == 2, result.output
    assert after == before, "a refused config wrote a cohort"
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    named = lines[0].removeprefix("error: ").removeprefix(f"{file}: ")
    assert ": " in named and "Traceback" not in named, lines[0]
