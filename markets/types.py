"""Market domain types shared by every venue and by replay datasets.

Prices are exact ``Decimal`` probabilities in [0, 1] as reported (at most ``PRICE_PLACES``
decimal places); whether a price is usable for a fill (strictly inside (0, 1)) is the
portfolio's decision, not the source's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from enum import StrEnum
from typing import Protocol

YES = "YES"
NO = "NO"
BINARY_OUTCOMES: tuple[str, ...] = (YES, NO)
PRICE_PLACES = 10
"""The most decimal places a price may carry: fills and marks store prices to 1e-10, so a source
must never hand out a finer one (a replay dataset with one is refused; a venue's binary-float
price, e.g. Manifold's 0.8958175225896258, is rounded to it, the raw payload keeping every digit)."""


class Venue(StrEnum):
    POLYMARKET = "polymarket"
    MANIFOLD = "manifold"


@dataclass(frozen=True, slots=True)
class Market:
    """A market as listed by its venue. ``market_id`` is the arena-wide key ``venue:venue_id``."""

    venue: Venue
    venue_id: str
    question: str
    outcomes: tuple[str, ...] = BINARY_OUTCOMES
    description: str = ""
    open_time: datetime | None = None
    close_time: datetime | None = None
    resolution_time: datetime | None = None
    category: str | None = None
    volume: Decimal | None = None
    liquidity: Decimal | None = None
    url: str | None = None
    # Venue-specific ids needed to fetch prices, e.g. Polymarket CLOB token id per outcome.
    token_ids: Mapping[str, str] = field(default_factory=dict)
    # The key, built once: a replay reads it about a million times and building it costs an
    # enum lookup each time. Not compared, so equality and hashing stay the venue's fields.
    _market_id: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_market_id", market_key(self.venue, self.venue_id))

    @property
    def market_id(self) -> str:
        return self._market_id

    @property
    def is_binary(self) -> bool:
        return self.outcomes == BINARY_OUTCOMES

    def is_closed(self, at: datetime) -> bool:
        """Whether the venue stopped trading it by ``at``: its close time is at or before ``at``.
        A market without a known close trades until it resolves (the source knows when)."""
        return self.close_time is not None and self.close_time <= at


def market_key(venue: Venue | str, venue_id: str) -> str:
    """The arena-wide market id: venue and venue id, so ids of two venues never collide."""
    name = venue.value if isinstance(venue, Venue) else Venue(venue).value
    return f"{name}:{venue_id}"


@dataclass(frozen=True, slots=True)
class PriceSnapshot:
    """Per-outcome prices of one market observed at one time, with provenance."""

    market_id: str
    prices: Mapping[str, Decimal]
    observed_at: datetime
    source: str
    bids: Mapping[str, Decimal] = field(default_factory=dict)
    asks: Mapping[str, Decimal] = field(default_factory=dict)
    raw_ref: str | None = None


class ResolutionKind(StrEnum):
    YES = "YES"
    NO = "NO"
    VOID = "VOID"
    FIFTY_FIFTY = "5050"
    OUTCOME = "OUTCOME"  # multi-outcome market: one named winner


# Dollars per share of each outcome when a binary market resolves; each resolution gets a copy.
_BINARY_PAYOUTS: dict[ResolutionKind, dict[str, Decimal]] = {
    ResolutionKind.YES: {YES: Decimal(1), NO: Decimal(0)},
    ResolutionKind.NO: {YES: Decimal(0), NO: Decimal(1)},
    ResolutionKind.FIFTY_FIFTY: {YES: Decimal("0.5"), NO: Decimal("0.5")},
    ResolutionKind.VOID: {},
}


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a market ended. ``payouts`` is dollars per share per outcome; empty for VOID."""

    market_id: str
    kind: ResolutionKind
    payouts: Mapping[str, Decimal]
    resolved_at: datetime
    source: str = ""

    @classmethod
    def binary(
        cls, market_id: str, kind: ResolutionKind, resolved_at: datetime, source: str = ""
    ) -> Resolution:
        """Payouts for a YES/NO market resolved YES, NO, VOID or 50-50."""
        if kind not in _BINARY_PAYOUTS:
            raise ValueError(f"binary resolution cannot be {kind}")
        return cls(market_id, kind, dict(_BINARY_PAYOUTS[kind]), resolved_at, source)

    @classmethod
    def winner(
        cls, market_id: str, outcomes: Sequence[str], winner: str, resolved_at: datetime, source: str = ""
    ) -> Resolution:
        """Payouts for a multi-outcome market won by ``winner``."""
        if winner not in outcomes:
            raise ValueError(f"winner {winner!r} is not an outcome of {market_id}: {list(outcomes)}")
        payouts = {o: Decimal(1 if o == winner else 0) for o in outcomes}
        return cls(market_id, ResolutionKind.OUTCOME, payouts, resolved_at, source)

    @property
    def is_void(self) -> bool:
        return self.kind is ResolutionKind.VOID


@dataclass(frozen=True, slots=True)
class Undecided:
    """A market that stopped trading or is being resolved, but whose outcome is not final yet
    (e.g. a Polymarket UMA answer proposed or disputed). Nothing settles until it is; the reason
    is logged and shown to operators, who may resolve it by hand."""

    market_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One market in a round's snapshot.

    ``history`` holds recent (observed_at, price of the first outcome) points at or before the
    snapshot time, oldest first, so stateless agents can use momentum without remembering rounds.
    """

    market: Market
    price: PriceSnapshot
    history: tuple[tuple[datetime, Decimal], ...] = ()


@dataclass(frozen=True, slots=True)
class MarketSnapshot:
    """What every agent of a round sees: the open markets and their latest prices as of ``as_of``."""

    as_of: datetime
    entries: tuple[SnapshotEntry, ...]
    _by_id: Mapping[str, SnapshotEntry] | None = field(default=None, init=False, repr=False, compare=False)

    def by_id(self) -> Mapping[str, SnapshotEntry]:
        """The entries by market id, built on first use: every agent of a round asks for them twice."""
        by_id = self._by_id
        if by_id is None:
            by_id = {e.market.market_id: e for e in self.entries}
            object.__setattr__(self, "_by_id", by_id)
        return by_id

    def content_hash(self) -> str:
        """A stable hash of the snapshot, stored with each round so rounds can be audited."""
        payload = [
            {
                "id": e.market.market_id,
                "outcomes": list(e.market.outcomes),
                "prices": {k: str(v) for k, v in sorted(e.price.prices.items())},
                "observed_at": e.price.observed_at.isoformat(),
            }
            for e in sorted(self.entries, key=lambda e: e.market.market_id)
        ]
        blob = json.dumps({"as_of": self.as_of.isoformat(), "markets": payload}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()


class MarketSource(Protocol):
    """Answers as of a time; nothing stamped after ``as_of`` may ever come out."""

    def open_markets(self, as_of: datetime) -> list[Market]:
        """Markets open for betting at ``as_of``: not resolved and not closed (``Market.is_closed``)."""
        ...

    def latest_prices(self, market_ids: Sequence[str], as_of: datetime) -> dict[str, PriceSnapshot]:
        """Latest price snapshot at or before ``as_of`` per market; markets with none are absent."""
        ...

    def resolutions(self, as_of: datetime) -> list[Resolution]:
        """Resolutions known at ``as_of``."""
        ...

    def snapshot(self, as_of: datetime) -> MarketSnapshot:
        """Open markets that have a price as of ``as_of``, with those prices."""
        ...
