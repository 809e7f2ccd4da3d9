"""Scoring frames read from the cohorts' rounds and frozen configs, for the newer ranking rules.

- ``listings``: per cohort and market, the first round whose snapshot held it.
- ``tournaments`` and ``windows``: each cohort's ``[tournament]`` settings and every offered
  market's question window (``arena.scoring.rules.tournament``).
- ``offers``: every (round, market) of a cohort's snapshots with its prices (binary markets: YES)
  and whether agents were shown them, which imputation scores (``arena.scoring.rules.imputed``).
- ``guards``: each ``llm`` seat of a replay cohort, with the end of its ``knowledge_cutoff`` day and
  whether the leakage guard covered it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from arena.cohorts.config import (
    PriceVisibility,
    ScheduleConfig,
    TournamentConfig,
    decisions_end,
    frozen_tournament,
)
from arena.cohorts.leakage import LLM_KIND, guarded, knowledge_ends
from arena.core.clock import ensure_utc
from arena.core.config_types import UtcDateTime
from arena.db.offered import first_offered
from arena.db.read_tables import agent, cohort, market, round_, round_market
from arena.scoring.load.frames import GUARDS, LISTINGS, OFFERS, TOURNAMENTS, WINDOWS
from arena.scoring.load.rows import LoadError, chunked, frame_of, outcome_prices


def listings(connection: Connection, cohort_ids: list[str]) -> pl.DataFrame:
    """Per cohort and market, the first round whose snapshot offered it (the start of coverage)."""
    return frame_of(first_offered(connection, cohort_ids), LISTINGS)


class RoundParts(BaseModel):
    """The parts of a frozen cohort config that tournament windows and shown prices depend on.

    A config frozen before ``[tournament]`` existed ran without a hidden period: it reads as
    ``frozen_tournament`` says, never as today's defaults."""

    model_config = ConfigDict(extra="ignore")
    start: UtcDateTime | None = None
    schedule: ScheduleConfig = ScheduleConfig()
    price_visibility: PriceVisibility = PriceVisibility()
    tournament: TournamentConfig = Field(default_factory=lambda: frozen_tournament(None))

    def prices_shown(self, at: datetime) -> bool:
        """Whether the cohort showed prices at ``at`` (before any tournament hidden period)."""
        return self.start is None or self.price_visibility.visible_at(self.start, at)


def round_parts(connection: Connection, cohort_ids: list[str]) -> dict[str, RoundParts]:
    """Each cohort's ``RoundParts`` from its frozen config, or a one-line ``LoadError``."""
    parts = {}
    for row in connection.execute(
        select(cohort.c.id, cohort.c.config_json).where(cohort.c.id.in_(cohort_ids)).order_by(cohort.c.id)
    ):
        try:
            parts[row.id] = RoundParts.model_validate(row.config_json)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise LoadError(f"cohort {row.id!r}: config_json is not valid ({problems})") from None
    return parts


def tournaments(
    connection: Connection, parts: dict[str, RoundParts], listings: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each cohort's ``[tournament]`` settings, and the window of every market it offered.

    A window is ``TournamentConfig.window`` of the listing, the market's stored close time and the
    cohort's end: ``start + every × rounds``, or, while the number of rounds is open (a replay
    until its data ends), one period after its last round so far, which is the replay's end once
    it ran (the engine hid exactly the prices these windows say it hid).
    """
    ends = {}
    last_rounds: dict[str, datetime] = dict(
        connection.execute(
            select(round_.c.cohort_id, func.max(round_.c.scheduled_at))
            .where(round_.c.cohort_id.in_(list(parts)))
            .group_by(round_.c.cohort_id)
        ).all()
    )
    for cohort_id, config in parts.items():
        last = last_rounds.get(cohort_id)
        end = decisions_end(config.start, config.schedule)
        ends[cohort_id] = end or (last and ensure_utc(last) + config.schedule.every)
    configs = {cohort_id: config.tournament for cohort_id, config in parts.items()}
    settings = [
        (cohort_id, t.prize_pool, t.reference, t.s_weight, t.c_weight) for cohort_id, t in configs.items()
    ]
    closes = dict(
        chunked(
            connection,
            sorted(set(listings["market_id"])),
            lambda ids: select(market.c.id, market.c.close_time).where(market.c.id.in_(ids)),
        )
    )
    windows = []
    for cohort_id, market_id, listed_at in listings.iter_rows():
        close = closes.get(market_id)
        end = ends[cohort_id]
        if end is None:  # a listing comes from a round, so its cohort has one
            raise LoadError(f"cohort {cohort_id!r}: market {market_id!r} is listed but no round is stored")
        w = configs[cohort_id].window(listed_at, close and ensure_utc(close), end)
        windows.append((cohort_id, market_id, w.opens_at, w.hidden_until, w.closes_at))
    return frame_of(settings, TOURNAMENTS), frame_of(windows, WINDOWS)


def shown(connection: Connection, cohort_ids: list[str]) -> list[Any]:
    """Every market of every round snapshot of the cohorts, with its prices as shown."""
    query = (
        select(
            round_.c.cohort_id, round_market.c.market_id, round_.c.scheduled_at, round_market.c.prices_json
        )
        .select_from(round_market)
        .join(round_, round_.c.id == round_market.c.round_id)
        .where(round_.c.cohort_id.in_(cohort_ids))
    )
    return list(connection.execute(query).all())


def offers(
    shown: list[Any], binary: set[str], parts: dict[str, RoundParts], windows: pl.DataFrame
) -> pl.DataFrame:
    """One row per (round, market outcome) offered, binary markets by their YES price, with
    ``shown``: whether the round showed agents that price (the cohort's ``price_visibility``, and
    the market's tournament window: hidden before its ``hidden_until``, as the engine hides it)."""
    hidden_until = {(c, m): ensure_utc(h) for c, m, _, h, _ in windows.iter_rows()}
    table = []
    for cohort_id, market_id, offered_at, prices in shown:
        at = ensure_utc(offered_at)
        hidden = hidden_until.get((cohort_id, market_id))
        seen = parts[cohort_id].prices_shown(at) and (hidden is None or at >= hidden)
        table += [
            (cohort_id, market_id, outcome, offered_at, price, seen)
            for outcome, price in outcome_prices(market_id, prices, market_id in binary).items()
        ]
    return frame_of(table, OFFERS)


def guards(connection: Connection, cohort_ids: list[str]) -> pl.DataFrame:
    """LLM seats of replay cohorts: the end of their knowledge-cutoff day, and the guard's state."""
    rows = connection.execute(
        select(agent.c.cohort_id, agent.c.name, agent.c.settings_json)
        .select_from(agent)
        .join(cohort, cohort.c.id == agent.c.cohort_id)
        .where(agent.c.cohort_id.in_(cohort_ids), agent.c.kind == LLM_KIND, cohort.c.mode == "replay")
    ).all()
    table = []
    for r in rows:
        if not guarded(LLM_KIND, r.settings_json or {}):
            continue
        cutoff = (r.settings_json or {}).get("knowledge_cutoff")
        try:
            ends = None if cutoff is None else knowledge_ends(cutoff)
        except ValueError:
            raise LoadError(
                f"agent {r.name!r} of cohort {r.cohort_id!r}: knowledge_cutoff {cutoff!r} is not a date"
            ) from None
        table.append((r.cohort_id, r.name, ends, "off" if ends is None else "on"))
    return frame_of(table, GUARDS)
