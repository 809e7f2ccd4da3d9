"""Pooling seats across cohorts: by display name (the default) or by model identity.

A leaderboard over several cohorts makes one row per bettor. ``by_model`` makes that bettor its
model identity (``agents.registry.model_identity``: kind, endpoint, model and prompt version for
an LLM; kind and complete settings for any other kind), never its display name, so two models
both named ``llm`` stay apart and one model seated as ``gpt`` here and ``gpt-4o`` there is one
row. Seats of one identity in one cohort keep apart (their name is added), as a row per cohort
seat is what the frames hold.

``by_cohort`` makes every seat its own bettor, named after its cohort's place in a list and its
agent (``0:kelly``, ``1:kelly``): two cohorts' agents of one name stay apart, to be compared.

``decided_seats`` leaves out, when several cohorts are pooled, the seats whose agent never
decided (nor, for an external forecaster, stated a forecast) in that cohort: an unused seat
would add its bankroll at 0 P/L and dilute the return.
An agent that never decided anywhere keeps its seats, so it is still listed.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

import polars as pl

from arena.scoring.load.frames import SPECS, ScoringFrames

PoolBy = Literal["name", "model"]
_LABEL = "{}:{}"  # ``by_cohort``'s name of a seat: its cohort's index, then its agent
SEAT = ["cohort_id", "agent"]


def by_model(frames: ScoringFrames, identities: pl.DataFrame) -> ScoringFrames:
    """``frames`` with each seat's ``agent`` replaced by its model identity.

    ``identities`` has one row per seat: ``cohort_id``, ``agent`` (the display name) and ``model``.
    """
    seats = frames.agents.select(SEAT).join(identities, on=SEAT, how="left", maintain_order="left")
    missing = seats.filter(pl.col("model").is_null())
    if len(missing):
        cohort, agent = missing.row(0)[:2]
        raise ValueError(f"agent {agent!r} of cohort {cohort!r} has no model identity")
    clash = pl.col("model").count().over("cohort_id", "model") > 1
    seats = seats.with_columns(
        model=pl.when(clash).then(pl.format("{} [{}]", "model", "agent")).otherwise(pl.col("model"))
    )
    renamed = {
        spec.name: getattr(frames, spec.name)
        .join(seats, on=SEAT, how="left", maintain_order="left")
        .with_columns(agent=pl.col("model"))
        .drop("model")
        for spec in SPECS
        if "agent" in spec.schema
    }
    return ScoringFrames.of(**{s.name: getattr(frames, s.name) for s in SPECS} | renamed)


def by_cohort(frames: ScoringFrames, cohorts: list[str]) -> ScoringFrames:
    """``frames`` of ``cohorts`` with each seat's ``agent`` prefixed by its cohort's index in
    ``cohorts`` (``cohort_label``); seats of other cohorts are left out. A replicate keeps its
    ``#k`` at the end, so its copies still make one board row."""
    frames = frames.cohorts(cohorts)
    index = pl.DataFrame({"cohort_id": cohorts, "_i": list(range(len(cohorts)))})
    renamed = {
        spec.name: getattr(frames, spec.name)
        .join(index, on="cohort_id", how="left", maintain_order="left")
        .with_columns(agent=pl.format(_LABEL, "_i", "agent"))
        .drop("_i")
        for spec in SPECS
        if "agent" in spec.schema
    }
    return ScoringFrames.of(**{s.name: getattr(frames, s.name) for s in SPECS} | renamed)


def cohort_label(index: int, agent: str) -> str:
    """The name ``by_cohort`` gives agent ``agent`` of the cohort at ``index``."""
    return _LABEL.format(index, agent)


def decided_seats(frames: ScoringFrames) -> ScoringFrames:
    """Across several cohorts, only seats that decided at least once (see the module docstring)."""
    if frames.agents["cohort_id"].n_unique() < 2:
        return frames
    # An external forecaster never decides: its imported forecasts are how it takes part.
    took_part = pl.concat([frames.decisions.select(SEAT), frames.forecasts.select(SEAT)])
    decided = took_part.unique().with_columns(decided=pl.lit(True))
    seats = frames.agents.select(SEAT).join(decided, on=SEAT, how="left", maintain_order="left")
    seats = seats.with_columns(decided=pl.col("decided").fill_null(False))
    keep = seats.filter(pl.col("decided") | ~pl.col("decided").any().over("agent")).select(SEAT)
    return replace(
        frames,
        **{
            s.name: getattr(frames, s.name).join(keep, on=SEAT, how="semi", maintain_order="left")
            for s in SPECS
            if "agent" in s.schema
        },
    )
