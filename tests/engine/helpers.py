"""Builders for engine tests: a tiny handmade replay dataset, configs, launch-and-replay."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from arena.cohorts import config as cohort_config
from arena.cohorts.config import parse_config
from arena.cohorts.launch import launch
from arena.core.clock import SimulatedClock
from arena.db.models import DecisionRow
from arena.engine.replay.runner import ReplayResult, ReplayRunner
from arena.engine.runtime.cohort import CohortRuntime, load_runtime
from markets.replay import DatasetInfo, ReplaySource, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue

D0 = datetime(2025, 1, 1, tzinfo=UTC)


def frozen_parses(monkeypatch: pytest.MonkeyPatch) -> list[Mapping[str, Any]]:
    """Every parse of a cohort's frozen config from now on (a spy: the real parser still runs)."""
    parses: list[Mapping[str, Any]] = []
    real = cohort_config.parse_config

    def spy(data: Mapping[str, Any], *, source: str = "config") -> Any:
        if source == "frozen cohort config":
            parses.append(data)
        return real(data, source=source)

    monkeypatch.setattr(cohort_config, "parse_config", spy)
    return parses


def day(n: int) -> datetime:
    return D0 + timedelta(days=n)


A, B, C = "polymarket:a", "polymarket:b", "manifold:c"


def tiny_dataset(directory: Path) -> Path:
    """Three binary markets with hand-picked prices (YES price by day) and resolutions:

    A: 0.40 (day 0), 0.50 (day 7), 0.60 (day 14); resolves YES on day 19.
    B: 0.25 (day 0), 0.20 (day 7);                 resolves NO on day 9.
    C: 0.50 (day 0), 0.80 (day 7);                 resolves VOID on day 17.
    """
    series = {A: {0: "0.40", 7: "0.50", 14: "0.60"}, B: {0: "0.25", 7: "0.20"}, C: {0: "0.50", 7: "0.80"}}
    ends = {A: (19, ResolutionKind.YES), B: (9, ResolutionKind.NO), C: (17, ResolutionKind.VOID)}
    return write_market_dataset(directory, series, ends, close_days={A: 19, B: 9, C: 17})


def write_market_dataset(
    directory: Path,
    series: Mapping[str, Mapping[int, str]],
    ends: Mapping[str, tuple[int, ResolutionKind]],
    *,
    close_days: Mapping[str, int] | None = None,
) -> Path:
    markets = [
        _market(m, close=day(close_days[m]) if close_days and m in close_days else None) for m in series
    ]
    prices = [
        PriceSnapshot(m, {"YES": Decimal(p), "NO": 1 - Decimal(p)}, day(d), "test")
        for m, points in series.items()
        for d, p in points.items()
    ]
    resolutions = [Resolution.binary(m, kind, day(d), "test") for m, (d, kind) in ends.items()]
    info = DatasetInfo(
        name="tiny", version="1", source="handmade for tests", license="CC0", created_with="tests"
    )
    write_dataset(directory, markets=markets, prices=prices, resolutions=resolutions, info=info)
    return directory


def _market(market_id: str, *, close: datetime | None) -> Market:
    venue, venue_id = market_id.split(":", 1)
    return Market(
        venue=Venue(venue),
        venue_id=venue_id,
        question=f"Will {venue_id.upper()} happen?",
        close_time=close,
        volume=Decimal(1000 * (ord(venue_id[0]) - 96)),
    )


def script(path: Path, lines: Iterable[Mapping[str, Any]]) -> Path:
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


def config(dataset: Path, agents: list[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    """A replay config over ``dataset`` starting on day 0; ``overrides`` replace top-level keys.

    Without a tournament hidden period (the default hides each market's price for the first 30%
    of its window): these tests follow what agents do with the prices they are shown; tests of
    the hidden period set ``tournament`` themselves."""
    base: dict[str, Any] = {
        "name": "tiny",
        "dataset": str(dataset),
        "start": D0,
        "schedule": {"every": "7d", "rounds": 2},
        "universe": {"min_price": "0.01", "max_price": "0.99"},
        "tournament": {"hidden_fraction": 0},
        "agents": agents,
    }
    return {**base, **overrides}


def launch_cohort(
    engine: Engine, data: dict[str, Any], *, environ: Mapping[str, str] | None = None
) -> tuple[str, ReplaySource]:
    cfg = parse_config(data)
    assert cfg.dataset is not None
    source = ReplaySource.from_directory(cfg.dataset)
    launched = launch(engine, cfg, source=source, environ=environ or {}, clock=SimulatedClock(D0))
    return launched.cohort_id, source


def runtime(engine: Engine, cohort_id: str, source: ReplaySource, **kwargs: Any) -> CohortRuntime:
    return load_runtime(engine, cohort_id, source=source, environ=kwargs.pop("environ", {}), **kwargs)


def replay(engine: Engine, data: dict[str, Any]) -> tuple[ReplayResult, CohortRuntime]:
    cohort_id, source = launch_cohort(engine, data)
    rt = runtime(engine, cohort_id, source)
    return asyncio.run(ReplayRunner(rt).run()), rt


def synthetic_dataset(directory: Path, *, markets: int = 12, days: int = 30, seed: int = 1) -> Path:
    """``markets`` binary markets with a seeded random walk of daily prices, resolving one after
    another over ``days`` (alternately YES and NO), for tests that need many commits."""
    import random

    rng = random.Random(seed)
    series: dict[str, dict[int, str]] = {}
    ends: dict[str, tuple[int, ResolutionKind]] = {}
    for i in range(markets):
        market_id = f"polymarket:m{i:02d}"
        end = days // 2 + (i * (days // 2)) // markets + 1
        price, points = rng.uniform(0.2, 0.8), {}
        for d in range(end):
            price = min(0.95, max(0.05, price + rng.uniform(-0.08, 0.08)))
            points[d] = f"{price:.2f}"
        series[market_id] = points
        ends[market_id] = (end, ResolutionKind.YES if i % 2 else ResolutionKind.NO)
    return write_market_dataset(directory, series, ends)


def stored_decisions(engine: Engine) -> list[DecisionRow]:
    """Every decision row, by round then agent."""
    with Session(engine) as session:
        return list(
            session.exec(
                select(DecisionRow).order_by(col(DecisionRow.round_id), col(DecisionRow.agent_id))
            ).all()
        )
