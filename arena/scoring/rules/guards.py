"""Per agent: whether the leakage guard covered it and how many of its rounds it may have seen past.

From the ``guards`` frame (LLM seats of replay cohorts, see ``arena.cohorts.leakage``):
``leakage_guard`` is ``"off"`` when any of the agent's seats ran without a knowledge cutoff,
else ``"on"``; null for agents with no such seat (baselines, other kinds, live cohorts).
``rounds_before_cutoff`` counts the agent's decisions in rounds earlier than the end of its
cutoff day: the model may know what happened after those rounds (0 for a seat without one).
"""

from __future__ import annotations

import polars as pl

from arena.scoring.load.frames import ScoringFrames

GUARD_OFF = "off"


def guard_metrics(frames: ScoringFrames) -> pl.DataFrame:
    """Per agent with a guarded or unguarded seat: ``leakage_guard`` and ``rounds_before_cutoff``."""
    early = (
        frames.guards.join(frames.decisions, on=["cohort_id", "agent"], how="left")
        .group_by("cohort_id", "agent")
        .agg(
            leakage_guard=pl.col("leakage_guard").first(),
            early=pl.col("decided_at").filter(pl.col("decided_at") < pl.col("knowledge_ends")).n_unique(),
        )
    )
    return early.group_by("agent").agg(
        leakage_guard=pl.when((pl.col("leakage_guard") == GUARD_OFF).any())
        .then(pl.lit(GUARD_OFF))
        .otherwise(pl.lit("on")),
        rounds_before_cutoff=pl.col("early").sum(),
    )
