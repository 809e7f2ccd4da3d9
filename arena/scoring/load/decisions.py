"""Read the cohorts' decisions and the probabilities they stated, for the scoring frames.

A decision's cost includes what its attempts that never stored it paid the provider; its stated
probabilities count as forecasts only when the decision had no error other than refused actions
(``states_forecasts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import polars as pl
from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from arena.core.decisions import INVALID_ACTIONS
from arena.db.read_tables import agent, decision, llm_charge, round_
from arena.scoring.load.frames import DECISIONS
from arena.scoring.load.rows import LoadError, frame_of


def read_decisions(connection: Connection, cohort_ids: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The decisions frame of ``cohort_ids`` and their raw stated probabilities.

    Only answered decisions (a ``decided_at``), in id order; the probabilities one row per market
    and outcome, each a number in [0, 1] or a ``LoadError``.
    """
    query = (
        select(
            decision.c.id,
            decision.c.cohort_id,
            agent.c.name,
            round_.c.scheduled_at,
            decision.c.error,
            decision.c.error_kind,
            decision.c.prompt_tokens,
            decision.c.completion_tokens,
            decision.c.cost_usd,
            decision.c.latency_s,
            decision.c.probabilities_json,
        )
        .select_from(decision)
        .join(agent, agent.c.id == decision.c.agent_id)
        .join(round_, round_.c.id == decision.c.round_id)
        .where(decision.c.cohort_id.in_(cohort_ids), decision.c.decided_at.is_not(None))
        .order_by(decision.c.id)
    )
    return _decision_frames(connection.execute(query).all(), _unstored_charges(connection, cohort_ids))


def _unstored_charges(connection: Connection, cohort_ids: list[str]) -> dict[int, Decimal]:
    """Per decision, what its attempts that never stored it paid the provider (``llm_charge``:
    a killed worker's, a decision given up on at its timeout): part of the decision's cost."""
    query = (
        select(llm_charge.c.decision_id, func.sum(llm_charge.c.cost_usd))
        .join(decision, decision.c.id == llm_charge.c.decision_id)
        .where(decision.c.cohort_id.in_(cohort_ids))
        .group_by(llm_charge.c.decision_id)
    )
    return {decision_id: cost for decision_id, cost in connection.execute(query).all()}


def _decision_frames(rows: Sequence[Any], charges: dict[int, Decimal]) -> tuple[pl.DataFrame, pl.DataFrame]:
    decisions = [
        (
            r.cohort_id,
            r.name,
            r.scheduled_at,
            None if r.error is None else (r.error_kind or "error"),
            r.prompt_tokens + r.completion_tokens,
            r.cost_usd + charges[r.id] if r.id in charges else r.cost_usd,
            r.latency_s,
        )
        for r in rows
    ]
    frame = frame_of(decisions, DECISIONS)
    # A cohort's decisions state thousands of probabilities: each is kept as (market, outcome, p)
    # and the index of its decision, whose seat and time are then gathered as columns of ``frame``.
    index: list[int] = []
    stated: list[tuple[str, str, float]] = []
    for i, r in enumerate(rows):
        if states_forecasts(r.error, r.error_kind) and r.probabilities_json:
            own = [
                (market_id, outcome, _probability(r.id, market_id, outcome, p))
                for market_id, by_outcome in r.probabilities_json.items()
                for outcome, p in by_outcome.items()
            ]
            index += [i] * len(own)
            stated += own
    markets, outcomes, probabilities = zip(*stated, strict=True) if stated else ((), (), ())
    forecasts = frame[index].select(
        "cohort_id",
        "agent",
        pl.Series("market_id", markets, dtype=pl.String),
        pl.Series("outcome", outcomes, dtype=pl.String),
        pl.Series("p", probabilities, dtype=pl.Float64),
        stated_at="decided_at",
    )
    return frame, forecasts


def states_forecasts(error: str | None, error_kind: str | None) -> bool:
    """Whether a decision's stated probabilities count as its forecasts: a valid decision's, and
    those of a decision whose actions alone the ledger refused (``invalid_actions``: the
    probabilities passed their own check, and a bet's leg is not a forecast's). Any other error
    left the decision with no usable answer."""
    return error is None or error_kind == INVALID_ACTIONS


def _probability(decision_id: int, market_id: str, outcome: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise LoadError(
            f"decision {decision_id}: probabilities_json[{market_id!r}][{outcome!r}] must be a number "
            f"in [0, 1], got {value!r}"
        )
    return float(value)
