"""A provider's limits (a cohort's ``[llm_limits]``), apart from the limiter that keeps to them
(``agents.llm.limiter``): a cohort's runtime reads them for every cohort, while the limiter and
its HTTP client are loaded only when an LLM agent is built, so a run of baselines alone never
imports httpx (about 45 ms of CPU, with its command-line module's imports)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProviderLimits:
    """What one provider is sent at most: requests per second, and requests open at once; and the
    longest a ``Retry-After`` from it may hold all of its agents."""

    requests_per_second: float
    max_in_flight: int
    max_pause_s: float = 60.0

    def __post_init__(self) -> None:
        if not self.requests_per_second > 0 or self.max_in_flight < 1 or not self.max_pause_s >= 0:
            raise ValueError(f"provider limits must be positive, got {self}")
