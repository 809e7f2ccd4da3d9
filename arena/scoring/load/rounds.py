"""Scoring frames read from the cohorts' rounds and frozen configs, for the newer ranking rules.

- ``listings``: per cohort and market, the first round whose snapshot held it.
- ``tournaments`` and ``windows``: each cohort's ``[tournament]`` settings and every offered
  market's question window (``arena.scoring.rules.tournament``).
- ``offers``: every (round, market) of a cohort's snapshots with the prices shown (binary markets:
  YES), which imputation scores (``arena.scoring.rules.imputed``).
- ``guards``: each ``llm`` seat of a replay cohort, with the end of its ``knowledge_cutoff`` day and
  whether the leakage guard covered it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, ValidationError
from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from arena.cohorts.config import ScheduleConfig, TournamentConfig, decisions_end
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


class _TournamentParts(BaseModel):
    """The parts of a frozen cohort config that tournament windows depend on."""

    model_config = ConfigDict(extra="ignore")
    start: UtcDateTime | None = None
    schedule: ScheduleConfig = ScheduleConfig()
    tournament: TournamentConfig = TournamentConfig()


def tournaments(
    connection: Connection, cohort_ids: list[str], listings: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each cohort's ``[tournament]`` settings, and the window of every market it offered.

    A window is ``TournamentConfig.window`` of the listing, the market's stored close time and the
    cohort's end: ``start + every × rounds``, or, while the number of rounds is open, one period
    after its last round so far (the hidden period needs a fixed number of rounds, so the engine
    hid exactly the prices these windows say it hid).
    """
    configs, ends = {}, {}
    last_rounds: dict[str, datetime] = dict(
        connection.execute(
            select(round_.c.cohort_id, func.max(round_.c.scheduled_at))
            .where(round_.c.cohort_id.in_(cohort_ids))
            .group_by(round_.c.cohort_id)
        ).all()
    )
    for row in connection.execute(
        select(cohort.c.id, cohort.c.config_json).where(cohort.c.id.in_(cohort_ids))
    ):
        try:
            config = _TournamentParts.model_validate(row.config_json)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise LoadError(f"cohort {row.id!r}: config_json is not valid ({problems})") from None
        configs[row.id] = config.tournament
        last = last_rounds.get(row.id)
        end = decisions_end(config.start, config.schedule)
        ends[row.id] = end or (last and ensure_utc(last) + config.schedule.every)
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


def offers(shown: list[Any], binary: set[str]) -> pl.DataFrame:
    """One row per (round, market outcome) offered; binary markets by their YES price."""
    table = [
        (cohort_id, market_id, outcome, offered_at, price)
        for cohort_id, market_id, offered_at, prices in shown
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
