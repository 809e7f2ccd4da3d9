"""external: a forecaster whose stated probabilities were made outside the arena and imported.

A human panel (ForecastBench's superforecasters), an offline model run or an aggregate of either
sits beside the arena's bettors on a cohort's markets: its forecasts are stored with their own
times and scored by the same stated-forecast rules. It never bets and never sees a snapshot, so
the arena never runs it: a cohort config naming the kind is refused at launch, and the engine
leaves its seats out of every round (``arena data import-forecasts`` / ``import-forecast-set``
seat it).

Settings say where the forecasts came from, so two seats of the same forecaster are one model
identity across cohorts (``agents.registry.model_identity``): ``source`` (the panel or forecast
set), ``forecaster`` (its id there) and, for an aggregate of the panel, ``aggregate`` (the
method, as ``agents.crowd.aggregate`` combines them).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EXTERNAL_KIND = "external"
AggregateMethod = Literal["median", "mean", "geo_mean"]


class ExternalSettings(BaseModel):
    """Where an external forecaster's forecasts came from (see the module docstring)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1, max_length=200, description="panel, forecast set or file")
    forecaster: str | None = Field(None, max_length=200, description="the forecaster's id in the source")
    aggregate: AggregateMethod | None = Field(None, description="an aggregate of the source's forecasters")


NOT_RUN = (
    "external forecasters are imported (`arena data import-forecasts`, "
    "`arena data import-forecast-set`), never launched in a cohort config"
)
