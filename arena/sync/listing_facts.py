"""What a Polymarket listing reads of each market payload, kept by the payload's digest.

Every sync lists every open market and, to apply its filters, reads each payload's token ids,
close time, liquidity and Gamma prices: JSON inside JSON strings, decimals and ISO times, about
as much work per market as everything else a no-change re-sync does together. They are a pure
function of the payload, and a payload is known by its digest (the first half of its sync
stamp), so a process that syncs again (``arena serve``, every few minutes) reads an unchanged
payload's facts from here instead. A one-shot ``arena markets sync`` reads them all once, as
before. Only facts read without error are kept, and only those of the current and the last sync
(``new_sync``), so what is kept is bounded by two listings whatever the process's lifetime.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal


@dataclass(frozen=True, slots=True)
class ListingFacts:
    """A market payload as the listing filters see it (one token per outcome, in payload order)."""

    tokens: tuple[str, ...]
    closes: datetime | None
    liquidity: Decimal | None
    prices: Sequence[Decimal]


class _Kept:
    """The facts read by the current sync, and those of the sync before it."""

    def __init__(self) -> None:
        self.current: dict[str, ListingFacts] = {}
        self.last: dict[str, ListingFacts] = {}


_kept = _Kept()


def new_sync() -> None:
    """A sync starts: the last one's facts stay at hand for it, older ones are dropped."""
    _kept.last, _kept.current = _kept.current, {}


def listing_facts(digest: str, read: Callable[[], ListingFacts]) -> ListingFacts:
    """The facts of the payload with this ``digest``: kept ones, or ``read()`` (which raises
    ``PayloadError`` for a payload the filters cannot read; nothing is kept then)."""
    found = _kept.current.get(digest)
    if found is None:
        found = _kept.last.get(digest) or read()
        _kept.current[digest] = found
    return found
