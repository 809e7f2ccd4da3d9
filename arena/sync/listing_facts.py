"""What a Polymarket listing reads of each market payload, kept by the payload's digest.

Every sync lists every open market and, to apply its filters, reads each payload's token ids,
close time, liquidity and Gamma prices: JSON inside JSON strings, decimals and ISO times, about
as much work per market as everything else a no-change re-sync does together. They are a pure
function of the payload, and a payload is known by its digest (the first half of its sync
stamp), so a process that syncs again (``arena serve``, every few minutes) reads an unchanged
payload's facts from here instead. A one-shot ``arena markets sync`` reads them all once, as
before. Only facts read without error are kept; the table is emptied once it holds
``KEPT`` payloads (a few syncs' worth), so it never grows without bound.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

KEPT = 100_000


@dataclass(frozen=True, slots=True)
class ListingFacts:
    """A market payload as the listing filters see it (one token per outcome, in payload order)."""

    tokens: tuple[str, ...]
    closes: datetime | None
    liquidity: Decimal | None
    prices: Sequence[Decimal]


_known: dict[str, ListingFacts] = {}


def listing_facts(digest: str, read: Callable[[], ListingFacts]) -> ListingFacts:
    """The facts of the payload with this ``digest``: kept ones, or ``read()`` (which raises
    ``PayloadError`` for a payload the filters cannot read; nothing is kept then)."""
    found = _known.get(digest)
    if found is None:
        found = read()
        if len(_known) >= KEPT:
            _known.clear()
        _known[digest] = found
    return found


def known_tokens(digest: str) -> tuple[str, ...] | None:
    """The token ids of a payload whose facts are kept, else None."""
    found = _known.get(digest)
    return None if found is None else found.tokens
