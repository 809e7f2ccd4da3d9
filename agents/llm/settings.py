"""Per-agent settings of an LLM bettor, as written in a cohort config.

The settings are stored with the cohort (``agent.settings_json``), so they must never hold a
secret: ``api_key_env`` names the environment variable the arena reads the key from, and any
other secret (a header, a query parameter of ``base_url``) is a reference ``"env:NAME"``
(``agents.llm.endpoint``).

What a provider may send back is bounded: ``max_response_bytes`` of decoded body per response,
``timeout_s`` for the whole exchange, ``max_wait_s`` for a ``Retry-After``; and what is kept of
it: ``max_raw_kept_chars`` of raw text in ``decision.raw_response``.
"""

from __future__ import annotations

import json
import re
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.llm.endpoint import check_base_url, check_headers

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
# The mock provider answers in-process; this URL (the reserved ``.invalid`` domain, which never
# resolves) only names it where an endpoint is shown, and no request ever leaves for it.
MOCK_BASE_URL = "http://mock.invalid/v1"
MOCK_PREFIX = "mock/"  # how a mock agent's model is shown everywhere: never mistaken for a real one
TEMPLATES_DIR = Path(__file__).parent / "templates"

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Limits on what one provider may send (docs/limits-and-safety.md "Limits").
MAX_TIMEOUT_S = 3_600.0
MAX_WAIT_S = 600.0
DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024  # a completion is a few KB; reasoning traces tens of KB
MAX_RESPONSE_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_RAW_KEPT_CHARS = 256 * 1024
MAX_USD_PER_MTOK = Decimal(10_000)
MAX_BUDGET_USD = Decimal(1_000_000_000)

ResponseFormat = Literal["json_schema", "json_object", "none"]
Provider = Literal["openai", "mock"]
# Prompt versions whose system prompt explains the research tools (docs/tools.md).
TOOL_PROMPT_VERSIONS = frozenset({"v2"})


class ToolSettings(BaseModel):
    """Whether the agent may call research tools before answering, and how much.

    ``max_calls`` bounds the tool calls of one decision (calls past it are answered with an
    error, and a model that keeps calling after being told is stopped); ``timeout_s`` bounds one
    call. Each call's answer is a further request to the provider: cost grows with the calls.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = False
    max_calls: int = Field(default=5, ge=0, le=50)
    timeout_s: float = Field(default=10.0, gt=0, le=600)


class BudgetSettings(BaseModel):
    """A dollar cap on what this agent may spend over its cohort; once reached it holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_cost_usd: Decimal | None = Field(default=None, ge=0, le=MAX_BUDGET_USD)


class MockSettings(BaseModel):
    """How the mock provider answers (``provider = "mock"``): a seeded policy, no model.

    Each answer bets on the first ``markets`` YES/NO markets of the prompt's list that have a
    price, ``bet_fraction`` of the max bet each (at least the minimum bet, within the cash), on
    the side its ``belief`` rates above the price; it states that belief when
    ``state_probabilities``. Before answering it makes ``tool_calls`` tool calls when the request
    offers tools. ``invalid_rate`` is the share of first answers that break the format on purpose
    (an amount written as a string), to exercise the corrective retry. The request's ``seed``
    (the agent's ``seed``) seeds every draw, so the same prompt and seed give the same answer.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    markets: int = Field(default=3, ge=0, le=50)
    bet_fraction: float = Field(default=0.5, gt=0, le=1)
    belief: Literal["noisy", "market", "half"] = "noisy"
    noise: float = Field(default=0.1, ge=0, le=0.5)
    state_probabilities: bool = True
    tool_calls: int = Field(default=1, ge=0, le=10)
    invalid_rate: float = Field(default=0.0, ge=0, le=1)


class LLMSettings(BaseModel):
    """How one LLM agent talks to its OpenAI-compatible endpoint and what its prompt holds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1, description="Exact model id, e.g. 'openai/gpt-4o-mini'.")
    provider: Provider = "openai"
    base_url: str = OPENROUTER_BASE_URL
    api_key_env: str | None = "OPENROUTER_API_KEY"
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | None = Field(default=None, ge=0, le=2**31 - 1)
    max_tokens: int | None = Field(default=4096, gt=0)
    timeout_s: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT_S)  # the whole exchange, body included
    transport_retries: int = Field(default=2, ge=0, le=10)
    backoff_s: float = Field(default=1.0, ge=0, le=MAX_WAIT_S)
    max_wait_s: float = Field(default=60.0, ge=0, le=MAX_WAIT_S)
    max_response_bytes: int = Field(default=DEFAULT_MAX_RESPONSE_BYTES, ge=64 * 1024, le=MAX_RESPONSE_BYTES)
    max_raw_kept_chars: int = Field(default=DEFAULT_MAX_RAW_KEPT_CHARS, ge=1024, le=MAX_RESPONSE_BYTES)
    invalid_retries: int = Field(default=1, ge=0, le=5)
    knowledge_cutoff: date | None = None
    reasoning: dict[str, Any] | None = None
    prompt_version: str = "v1"
    response_format: ResponseFormat = "json_schema"
    usd_per_mtok_input: Decimal | None = Field(default=None, ge=0, le=MAX_USD_PER_MTOK)
    usd_per_mtok_output: Decimal | None = Field(default=None, ge=0, le=MAX_USD_PER_MTOK)
    max_markets: int = Field(default=50, gt=0, le=1000)
    max_description_chars: int = Field(default=1200, ge=0)
    prompt_token_budget: int = Field(default=24_000, ge=1_000)
    extra_headers: dict[str, str] = Field(default_factory=dict)
    tools: ToolSettings = ToolSettings()
    budget: BudgetSettings = BudgetSettings()
    mock: MockSettings = MockSettings()

    @model_validator(mode="before")
    @classmethod
    def _mock_is_in_process(cls, data: Any) -> Any:
        """A mock takes no endpoint and no key; ``mock`` settings belong to a mock only."""
        if not isinstance(data, dict):
            return data
        if data.get("provider") == "mock":
            own = {"base_url": MOCK_BASE_URL, "api_key_env": None}  # what a dumped mock holds
            given = sorted(k for k in own if data.get(k, own[k]) not in (own[k], ""))
            if given:
                raise ValueError(
                    f"provider 'mock' answers in-process and takes no {' or '.join(given)}; remove it"
                )
            return {**data, "base_url": MOCK_BASE_URL, "api_key_env": None}
        if "mock" in data:
            raise ValueError("'mock' settings apply only to provider = \"mock\"")
        return data

    @model_validator(mode="after")
    def _tools_need_their_prompt(self) -> LLMSettings:
        if self.tools.enabled and self.prompt_version not in TOOL_PROMPT_VERSIONS:
            raise ValueError(
                f"tools.enabled needs a prompt version that explains the tools "
                f"({', '.join(sorted(TOOL_PROMPT_VERSIONS))}); got prompt_version {self.prompt_version!r}"
            )
        return self

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return check_base_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _env_name_only(cls, value: str | None) -> str | None:
        if not value:
            return None  # no key: a local server
        if not _ENV_NAME.fullmatch(value):
            raise ValueError(
                "api_key_env must be the NAME of an environment variable (e.g. OPENROUTER_API_KEY), "
                "never the key itself"
            )
        return value

    @field_validator("prompt_version")
    @classmethod
    def _templates_exist(cls, value: str) -> str:
        folder = TEMPLATES_DIR / value
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", value) or not (folder / "system.txt").is_file():
            known = sorted(p.name for p in TEMPLATES_DIR.iterdir() if p.is_dir())
            raise ValueError(f"prompt_version {value!r} has no templates; known versions: {known}")
        return value

    @field_validator("reasoning")
    @classmethod
    def _plain_json(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """It is sent as given, so it must be JSON: TOML's ``nan``/``inf`` are not."""
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"reasoning must hold only JSON values (no nan or inf): {exc}") from None
        return value

    @field_validator("extra_headers")
    @classmethod
    def _no_secret_headers(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value)

    @property
    def is_mock(self) -> bool:
        return self.provider == "mock"

    @property
    def shown_model(self) -> str:
        """The model as every table and report shows it: ``mock/<model>`` for the mock provider."""
        return f"{MOCK_PREFIX}{self.model}" if self.is_mock else self.model

    def cost_from_tokens(self, prompt_tokens: int, completion_tokens: int) -> Decimal:
        """Cost from the price table, for providers that report tokens but no cost (0 if unpriced)."""
        per_million = Decimal(1_000_000)
        cost = Decimal(0)
        if self.usd_per_mtok_input is not None:
            cost += self.usd_per_mtok_input * prompt_tokens / per_million
        if self.usd_per_mtok_output is not None:
            cost += self.usd_per_mtok_output * completion_tokens / per_million
        return cost
