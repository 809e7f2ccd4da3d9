"""How many agents a round asks at once, and how hard they may press each LLM provider.

A round asks all its agents together (``concurrency``, capped at ``MAX_CONCURRENCY`` so a huge
cohort cannot open thousands of connections at once); what keeps that within a provider's
limits is ``[llm_limits]``, applied per provider by ``agents.llm.limiter``. The defaults let a
round of 100 agents on one provider start together; lower them for a provider with tighter
limits (a local server serving one request at a time: ``max_in_flight = 1``). ``max_pause_s``
caps how long one agent's ``Retry-After`` holds every agent of its provider.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

MAX_CONCURRENCY = 256
MAX_PAUSE_S = 600.0


class LLMLimitsConfig(BaseModel):
    """``[llm_limits]``: per LLM provider (origin of ``base_url``), shared by the cohort's agents."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    requests_per_second: float = Field(default=100, gt=0, le=1_000_000)
    max_in_flight: int = Field(default=128, ge=1, le=MAX_CONCURRENCY)
    max_pause_s: float = Field(default=60.0, ge=0, le=MAX_PAUSE_S)
