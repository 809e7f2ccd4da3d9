"""What every research tool is made of: its spec, what it reads, and its argument check.

A tool reads only ``RoundFacts`` (built once per round from the round's point-in-time snapshot
and open-market list, the very data the round offers from) and the asking agent's own
``PortfolioView``: no tool runs a query of its own against market data, so what a tool can
return is bounded by what the ``MarketSource`` returned as of the round, which the
point-in-time harness (``markets/replay/point_in_time.py``) checks for every source.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol

from agents.tools import ToolError, ToolSpec
from agents.types import PortfolioView
from markets.types import Market, MarketSnapshot, SnapshotEntry


class NewsHitLike(Protocol):
    """One document found by a corpus search (``arena.corpus.search.NewsHit`` has these fields);
    read-only, so a frozen dataclass with ``url: str`` fits as well as one with ``str | None``."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def published_at(self) -> datetime: ...
    @property
    def url(self) -> str | None: ...
    @property
    def source(self) -> str | None: ...
    @property
    def snippet(self) -> str: ...
    @property
    def score(self) -> float: ...


# (query, k, before) -> documents published strictly before ``before``, best first.
NewsSearch = Callable[[str, int, datetime], Sequence[NewsHitLike]]


@dataclass
class RoundFacts:
    """What the tools of one round may read, shared by every agent of the round.

    ``markets``: open at ``at`` (leakage-guard exclusions and closed markets removed, whatever the
    source says: a tool never shows a closed market as open); ``entries``: those of them
    with a price in the round's full snapshot, with its recent history. Prices are shown only
    when the cohort shows them at ``at`` and the market is not in ``hidden`` (its tournament
    hidden period).
    """

    at: datetime
    markets: Mapping[str, Market]
    entries: Mapping[str, SnapshotEntry]
    prices_visible: bool
    hidden: frozenset[str] = frozenset()
    news: NewsSearch | None = None
    news_lag: timedelta = timedelta(days=1)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def build(
        cls,
        at: datetime,
        full: MarketSnapshot,
        open_markets: Iterable[Market],
        *,
        excluded: frozenset[str],
        prices_visible: bool,
        hidden: frozenset[str] = frozenset(),
        news: NewsSearch | None = None,
        news_lag: timedelta = timedelta(days=1),
    ) -> RoundFacts:
        markets = {
            m.market_id: m for m in open_markets if m.market_id not in excluded and not m.is_closed(at)
        }
        entries = {e.market.market_id: e for e in full.entries if e.market.market_id in markets}
        return cls(at, markets, entries, prices_visible, hidden, news, news_lag)

    def shows_price(self, market_id: str) -> bool:
        return self.prices_visible and market_id not in self.hidden

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        """A value computed once per round (an index), whichever agent's call needs it first."""
        with self._lock:
            if key not in self._cache:
                self._cache[key] = make()
            return self._cache[key]

    def market(self, market_id: str) -> Market:
        """An open market by id, or the error the model is told."""
        found = self.markets.get(market_id)
        if found is None:
            raise ToolError(f"no market {market_id[:120]!r} is open at this round; search_markets finds ids")
        return found


@dataclass(frozen=True)
class ToolContext:
    """One agent's view of the tools in one round."""

    facts: RoundFacts
    portfolio: PortfolioView


@dataclass(frozen=True)
class Tool:
    """One tool: its spec (name, description, argument schema) and how it answers.

    ``run`` gets the checked arguments and returns plain JSON values. ``blocking`` tools (those
    that read the database) run in a worker thread, so the round's event loop never waits on them.
    """

    spec: ToolSpec
    run: Callable[[ToolContext, Mapping[str, Any]], Any]
    blocking: bool = False


def parameters(properties: Mapping[str, Mapping[str, Any]], required: Sequence[str] = ()) -> dict[str, Any]:
    """The JSON schema of an arguments object with exactly these properties."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(required),
        "additionalProperties": False,
    }


def check_arguments(spec: ToolSpec, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments with defaults filled in, or ToolError naming the first problem.

    Covers the schema subset the tools use: string (maxLength) and integer (minimum, maximum)
    properties, ``required``, and no unknown keys. Nothing is coerced: "5" is not 5.
    """
    properties: Mapping[str, Mapping[str, Any]] = spec.parameters["properties"]
    unknown = sorted(k for k in arguments if k not in properties)
    if unknown:
        allowed = ", ".join(properties) or "none"
        raise ToolError(f"unknown argument(s) {', '.join(repr(k[:40]) for k in unknown)}; allowed: {allowed}")
    missing = [k for k in spec.parameters["required"] if k not in arguments]
    if missing:
        raise ToolError(f"missing argument(s) {', '.join(missing)}")
    checked: dict[str, Any] = {}
    for name, schema in properties.items():
        value = arguments.get(name, schema.get("default"))
        if value is not None or name in arguments:
            _check_value(name, schema, value)
        checked[name] = value
    return checked


def _check_value(name: str, schema: Mapping[str, Any], value: Any) -> None:
    if schema["type"] == "string":
        if not isinstance(value, str):
            raise ToolError(f"{name}: expected a string, got {_kind(value)}")
        if not value.strip():
            raise ToolError(f"{name}: must not be empty")
        if len(value) > schema.get("maxLength", math.inf):
            raise ToolError(f"{name}: at most {schema['maxLength']} characters, got {len(value)}")
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{name}: expected an integer, got {_kind(value)}")
    low, high = schema.get("minimum", -math.inf), schema.get("maximum", math.inf)
    if not low <= value <= high:
        raise ToolError(f"{name}: must be between {low} and {high}, got {value}")


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def prices_json(prices: Mapping[str, Decimal]) -> dict[str, str]:
    """Prices as exact decimal strings, as everywhere the arena writes money or prices."""
    return {outcome: str(price) for outcome, price in prices.items()}
