"""Cohort configuration: one TOML file describes a whole cohort (mode, schedule, rules, universe, agents).

The file is validated strictly (unknown keys are errors, because a misspelt setting that silently
does nothing would change an experiment without anyone noticing). The *effective* config, with
every default filled in, is what gets frozen into the cohort row together with its sha256, so a
cohort can always be re-run or audited exactly as it was launched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from arena.cohorts.provider_limits import MAX_CONCURRENCY, LLMLimitsConfig
from arena.cohorts.sections import BudgetConfig, MarksConfig, PricesConfig, ScoringConfig, ToolsConfig
from arena.core.config_types import (
    MAX_DURATION,
    Duration,
    PositiveAmount,
    Probability,
    Strict,
    UtcDateTime,
    format_duration,
)
from markets.types import Venue
from portfolio.rules import DEFAULT_BANKROLL, DEFAULT_MAX_BET_FRACTION, DEFAULT_MIN_BET, Rules
from portfolio.units import Money

DEFAULT_DATASET = "data/forecastbench"
# Limits of a cohort (docs/limits-and-safety.md "Limits"): counts a config may ask for, and when
# it may start. What the cohort implies in all (rounds, marks, decisions) is checked at launch
# (``arena.cohorts.workload``).
MAX_ROUNDS = 100_000
MAX_SEED = 2**31 - 1  # the cohort.seed column is a 32-bit integer on PostgreSQL
MAX_DAYS = 36_500
MAX_MARKETS = 100_000
EARLIEST_START = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_START = datetime(2200, 1, 1, tzinfo=UTC)


class ConfigError(ValueError):
    """A cohort config that cannot be used; the message names the file, the key and what was expected."""


class ScheduleConfig(Strict):
    """When decision rounds happen: every ``every`` from the cohort start, ``rounds`` times.

    ``catch_up_grace`` (live): a round found due later than this after its scheduled time (the
    server was down) is recorded as missed for every agent instead of being asked now: a model
    asked today about an old snapshot would know what happened since.
    """

    every: Duration = timedelta(days=7)
    # None: keep deciding until the replay data ends (live cohorts must give a number).
    rounds: int | None = Field(default=None, ge=1, le=MAX_ROUNDS)
    catch_up_grace: Duration = timedelta(hours=1)

    @model_validator(mode="after")
    def _span_fits(self) -> ScheduleConfig:
        """The last round must be a date: ``every × rounds`` within ``MAX_DURATION``."""
        span = self.every.total_seconds() * (self.rounds or 1)
        if span > MAX_DURATION.total_seconds():
            raise ValueError(
                f"every × rounds spans {span / 86_400:,.0f} days; at most {format_duration(MAX_DURATION)}"
            )
        return self


def decisions_end(start: datetime | None, schedule: ScheduleConfig) -> datetime | None:
    """When the last round's decisions stop standing (``start + every × rounds``); None while
    the number of rounds is open (a replay that runs until its data ends)."""
    if start is None or schedule.rounds is None:
        return None
    return start + schedule.every * schedule.rounds


class RulesConfig(Strict):
    bankroll: PositiveAmount = DEFAULT_BANKROLL
    min_bet: PositiveAmount = DEFAULT_MIN_BET
    max_bet_fraction: Annotated[Decimal, Field(gt=0, le=1), PlainSerializer(str)] = DEFAULT_MAX_BET_FRACTION

    @model_validator(mode="after")
    def _a_bet_is_possible(self) -> RulesConfig:
        """A min_bet above the first decision's largest bet would let the cohort run without ever
        betting, silently: refuse it at launch instead."""
        largest = self.bankroll * self.max_bet_fraction
        if self.min_bet > largest:
            raise ValueError(
                f"min_bet ({self.min_bet}) is above the largest bet a full bankroll allows "
                f"(bankroll × max_bet_fraction = {largest}): no agent could ever bet"
            )
        return self

    def to_rules(self) -> Rules:
        return Rules(
            bankroll=Money(self.bankroll), min_bet=Money(self.min_bet), max_bet_fraction=self.max_bet_fraction
        )


class UniverseConfig(Strict):
    """Which markets a round offers: filters first, then ``order_by``, then the first ``max_markets``."""

    max_markets: int = Field(default=50, ge=1, le=MAX_MARKETS)
    venues: tuple[Venue, ...] = (Venue.POLYMARKET, Venue.MANIFOLD)
    min_volume: Annotated[Decimal, Field(ge=0, le=Decimal(10) ** 15), PlainSerializer(str)] | None = None
    min_days_to_close: float | None = Field(default=None, ge=0, le=MAX_DAYS)
    max_days_to_close: float | None = Field(default=None, gt=0, le=MAX_DAYS)
    min_price: Probability = Decimal("0.02")
    max_price: Probability = Decimal("0.98")
    order_by: Literal["volume", "close_time", "market_id"] = "volume"

    @model_validator(mode="after")
    def _ranges_are_ordered(self) -> UniverseConfig:
        if self.min_price >= self.max_price:
            raise ValueError(f"min_price ({self.min_price}) must be below max_price ({self.max_price})")
        lo, hi = self.min_days_to_close, self.max_days_to_close
        if lo is not None and hi is not None and lo >= hi:
            raise ValueError(f"min_days_to_close ({lo}) must be below max_days_to_close ({hi})")
        return self


class TakerFee(Strict):
    """Polymarket-style taker fee: ``shares × rate × (p·(1−p))^exponent`` dollars, per fill."""

    rate: Annotated[Decimal, Field(ge=0, le=1), PlainSerializer(str)] = Decimal(0)
    exponent: int = Field(default=1, ge=0, le=4)


def _default_fees() -> dict[Venue, TakerFee]:
    return {Venue.POLYMARKET: TakerFee(rate=Decimal("0.04")), Venue.MANIFOLD: TakerFee()}


class FillsConfig(Strict):
    """``mid``: fill at the snapshot's price. ``realistic``: buy at the ask, sell at the bid, plus
    the venue's taker fee, and refuse to trade a market whose snapshot has no book."""

    model: Literal["mid", "realistic"] = "mid"
    taker_fees: dict[Venue, TakerFee] = Field(default_factory=_default_fees)


class PriceVisibility(Strict):
    """Whether agents see market prices: ``always``, ``never``, or only from ``after_days`` days after
    the cohort start (to measure forecasts made without anchoring on the market)."""

    mode: Literal["always", "never", "after_days"] = "always"
    after_days: int | None = Field(default=None, ge=0, le=MAX_DAYS)

    @model_validator(mode="before")
    @classmethod
    def _from_shorthand(cls, value: object) -> object:
        if isinstance(value, str):
            return {"mode": value}
        if isinstance(value, Mapping) and set(value) == {"after_days"}:
            return {"mode": "after_days", "after_days": value["after_days"]}
        return value

    @model_validator(mode="after")
    def _days_given_only_with_after_days(self) -> PriceVisibility:
        if (self.mode == "after_days") != (self.after_days is not None):
            raise ValueError("use 'always', 'never' or { after_days = N }")
        return self

    def visible_at(self, start: datetime, now: datetime) -> bool:
        if self.mode == "after_days":
            return now >= start + timedelta(days=self.after_days or 0)
        return self.mode == "always"


@dataclass(frozen=True, slots=True)
class QuestionWindow:
    """A question's scoring window in a cohort (the Metaculus tournament rules).

    ``opens_at`` ≤ ``hidden_until`` ≤ ``closes_at``.
    """

    opens_at: datetime
    hidden_until: datetime
    closes_at: datetime


DEFAULT_HIDDEN_FRACTION = 0.3
"""The Metaculus rules' analysis: hiding the median for 20–30% of each question's duration, with
``c_weight = 1``, left a copy-the-median bot below the median forecaster and with little prize."""


class TournamentConfig(Strict):
    """Metaculus tournament scoring (the Metaculus tournament rules; docs/scoring.md "Tournament").

    ``hidden_fraction``: the first share of each question's window during which its market price
    is hidden from agents (``DEFAULT_HIDDEN_FRACTION`` by default). ``s_weight``: the share of a
    question's score decided in that hidden period; unset, every moment of the window weighs the
    same, i.e. it equals ``hidden_fraction``. ``c_weight``: the share of its coverage decided
    there; unset, 1 whenever there is a hidden period (coverage is earned only while the price is
    hidden, so an agent that restates the price it sees covers nothing and wins nothing), else 0.
    Both are frozen as numbers.
    """

    prize_pool: PositiveAmount = Decimal("1000")
    reference: Literal["market", "cohort_median"] = "market"
    hidden_fraction: Annotated[float, Field(ge=0, le=1)] = DEFAULT_HIDDEN_FRACTION
    s_weight: Annotated[float, Field(ge=0, le=1)] = DEFAULT_HIDDEN_FRACTION
    c_weight: Annotated[float, Field(ge=0, le=1)] = 1.0

    @model_validator(mode="before")
    @classmethod
    def _weights_by_default(cls, value: object) -> object:
        if isinstance(value, Mapping):
            hidden = value.get("hidden_fraction", DEFAULT_HIDDEN_FRACTION)
            valid = isinstance(hidden, int | float) and not isinstance(hidden, bool) and 0 <= hidden <= 1
            equal = hidden if valid else 0.0  # an invalid fraction is reported once, on its own key
            return {"s_weight": equal, "c_weight": 1.0 if equal > 0 else 0.0, **value}
        return value

    @model_validator(mode="after")
    def _weights_fit_the_periods(self) -> TournamentConfig:
        """A weight on an empty period would divide by zero time: say so instead."""
        for key in ("s_weight", "c_weight"):
            weight = getattr(self, key)
            if self.hidden_fraction == 0 and weight != 0:
                raise ValueError(f"{key} ({weight}) weighs a hidden period, but hidden_fraction is 0")
            if self.hidden_fraction == 1 and weight != 1:
                raise ValueError(f"{key} ({weight}) weighs a visible period, but hidden_fraction is 1")
        return self

    def window(self, opens_at: datetime, close_time: datetime | None, cohort_end: datetime) -> QuestionWindow:
        """The window of a question first offered at ``opens_at``: it ends at the market's close or
        the cohort's end, whichever is first (never before it opens); its first
        ``hidden_fraction`` is hidden. The engine (what agents see) and scoring both use this."""
        closes_at = max(opens_at, min(close_time or cohort_end, cohort_end))
        return QuestionWindow(opens_at, opens_at + (closes_at - opens_at) * self.hidden_fraction, closes_at)


MAX_REPLICATES = 100


class AgentConfig(BaseModel):
    """One ``[[agents]]`` entry: name, kind and the kind's own settings (checked by agents.registry).

    ``replicates`` (default 1) seats that many independent copies of the agent
    (``arena.cohorts.seats``); it is left out of the frozen form while it is 1, so configs written
    before it existed keep their hash.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    name: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    kind: str = Field(min_length=1)
    replicates: int = Field(default=1, ge=1, le=MAX_REPLICATES)

    @property
    def settings(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @model_serializer(mode="wrap")
    def _without_one_replicate(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        if dumped.get("replicates") == 1:
            del dumped["replicates"]
        return dumped


# Added after the first release (see ``config_hash``): whole sections, and keys of older sections.
LATER_SECTIONS = ("tournament", "scoring", "prices", "tools", "budget", "llm_limits")
LATER_KEYS = {"schedule": ("catch_up_grace",), "llm_limits": ("max_pause_s",)}
# A later section whose defaults have changed since it was added: the form it had then, which a
# cohort frozen without the section ran with (``config_from_frozen``, ``config_hash``).
FIRST_FORMS: dict[str, dict[str, Any]] = {"tournament": {"hidden_fraction": 0.0}}


def frozen_tournament(section: Mapping[str, Any] | None) -> TournamentConfig:
    """The ``[tournament]`` a frozen config ran with: its section, or, frozen before the section
    existed, the first form (no hidden period), never today's defaults."""
    return TournamentConfig.model_validate(FIRST_FORMS["tournament"] if section is None else section)


class CohortConfig(Strict):
    name: str = Field(min_length=1, max_length=120)
    mode: Literal["replay", "live"] = "replay"
    # Replay: the dataset folder. Live: the venue whose synced markets are offered.
    dataset: str | None = None
    venue: Venue | None = None
    start: UtcDateTime | None = None
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    schedule: ScheduleConfig = ScheduleConfig()
    rules: RulesConfig = RulesConfig()
    universe: UniverseConfig = UniverseConfig()
    fills: FillsConfig = FillsConfig()
    price_visibility: PriceVisibility = PriceVisibility()
    tournament: TournamentConfig = TournamentConfig()
    marks: MarksConfig = MarksConfig()
    prices: PricesConfig = PricesConfig()
    scoring: ScoringConfig = ScoringConfig()
    tools: ToolsConfig = ToolsConfig()
    budget: BudgetConfig = BudgetConfig()
    # A round asks up to ``concurrency`` agents at once (default: all, up to the cap), each LLM
    # provider within ``llm_limits``; one agent call may take at most call_timeout.
    concurrency: int = Field(default=MAX_CONCURRENCY, ge=1, le=MAX_CONCURRENCY)
    llm_limits: LLMLimitsConfig = LLMLimitsConfig()
    call_timeout: Duration = timedelta(minutes=2)
    round_budget: Duration = timedelta(minutes=15)
    agents: tuple[AgentConfig, ...] = Field(min_length=1)

    @field_validator("agents")
    @classmethod
    def _unique_names(cls, agents: tuple[AgentConfig, ...]) -> tuple[AgentConfig, ...]:
        seen: set[str] = set()
        for agent in agents:
            if agent.name in seen:
                raise ValueError(f"agent name {agent.name!r} is used twice; names must be unique")
            seen.add(agent.name)
        return agents

    @model_validator(mode="before")
    @classmethod
    def _default_dataset(cls, data: object) -> object:
        if isinstance(data, Mapping) and data.get("mode", "replay") == "replay" and "dataset" not in data:
            return {**data, "dataset": DEFAULT_DATASET}
        return data

    @model_validator(mode="after")
    def _mode_fields(self) -> CohortConfig:
        if self.mode == "replay":
            if self.venue is not None:
                raise ValueError("'venue' is only for live cohorts; replay cohorts take 'dataset'")
        else:
            if self.dataset is not None:
                raise ValueError("'dataset' is only for replay cohorts; live cohorts take 'venue'")
            if self.venue is None:
                raise ValueError("live cohorts need venue = 'polymarket' or 'manifold'")
            if self.schedule.rounds is None:
                raise ValueError("live cohorts need schedule.rounds (a replay may run until its data ends)")
        return self

    @field_validator("start")
    @classmethod
    def _start_in_range(cls, start: datetime | None) -> datetime | None:
        problem = None if start is None else start_problem(start)
        if problem:
            raise ValueError(problem)
        return start

    @property
    def decisions_end(self) -> datetime | None:
        return decisions_end(self.start, self.schedule)

    @property
    def rules_value(self) -> Rules:
        return self.rules.to_rules()

    def effective_json(self) -> str:
        """The frozen, canonical form stored in the cohort row (sorted keys, defaults filled)."""
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))

    def config_hash(self) -> str:
        """sha256 of the canonical form, less the sections and keys added after the first
        release while they hold their defaults: a cohort launched before ``[tournament]``,
        ``[scoring]``, ``[prices]``, ``[tools]``, ``[budget]``, ``[llm_limits]`` or
        ``schedule.catch_up_grace`` existed still verifies (and relaunches under its id), and one
        that sets them is hashed with them."""
        frozen = self.model_dump(mode="json")
        for section in LATER_SECTIONS:
            first = type(getattr(self, section)).model_validate(FIRST_FORMS.get(section, {}))
            if frozen[section] == first.model_dump(mode="json"):
                del frozen[section]
        for section, keys in LATER_KEYS.items():
            if section not in frozen:  # a later section left out whole, above
                continue
            defaults = type(getattr(self, section))().model_dump(mode="json")
            for key in keys:
                if frozen[section][key] == defaults[key]:
                    del frozen[section][key]
        canonical = json.dumps(frozen, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def start_problem(start: datetime) -> str | None:
    """Why a cohort cannot start at ``start`` (None: it can). It must lie in [``EARLIEST_START``,
    ``LATEST_START``): no market predates the first, and a schedule from the second could run
    past what a date holds (year 9999)."""
    if EARLIEST_START <= start < LATEST_START:
        return None
    return (
        f"{start.isoformat()} is outside the supported range "
        f"[{EARLIEST_START:%Y-%m-%d}, {LATEST_START:%Y-%m-%d})"
    )


def _describe(error: Mapping[str, Any]) -> str:
    location = (
        ".".join(str(part) for part in error["loc"] if part not in ("function-after",)) or "(top level)"
    )
    message = str(error["msg"]).removeprefix("Value error, ")
    if error["type"] == "extra_forbidden":
        message = "unknown key (check the spelling; see docs/cohorts.md for the keys)"
    elif error["type"] == "missing":
        message = "required key is missing"
    return f"{location}: {message}"


def parse_config(data: Mapping[str, Any], *, source: str = "config") -> CohortConfig:
    """Validate a decoded config; every problem becomes one line naming its key."""
    try:
        return CohortConfig.model_validate(dict(data))
    except ValidationError as exc:
        lines = [_describe(err) for err in exc.errors()]
        raise ConfigError(f"{source}: " + "; ".join(lines)) from None


def load_config(path: Path) -> CohortConfig:
    """Read and validate a cohort TOML file.

    ``tomllib`` is imported here, not with the module: it compiles its regular expressions on
    import (about 20 ms), and most importers of the config models (scoring, every command reading a
    frozen config) never read a TOML file."""
    import tomllib

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return parse_config(raw, source=str(path))


def config_from_frozen(frozen: str | Mapping[str, Any]) -> CohortConfig:
    """Rebuild the config frozen in a cohort row (never re-read the TOML: the file may have changed)."""
    data = json.loads(frozen) if isinstance(frozen, str) else frozen
    if "tournament" not in data:  # frozen before the section existed: it ran without a hidden period
        data = {**data, "tournament": FIRST_FORMS["tournament"]}
    return parse_config(data, source="frozen cohort config")
