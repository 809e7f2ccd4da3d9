"""Listing facts are read once per payload digest, never kept when unreadable, and kept for two syncs."""

from __future__ import annotations

from decimal import Decimal

import pytest

from arena.sync import listing_facts as facts
from markets.http import PayloadError

FACTS = facts.ListingFacts(("1", "2"), None, Decimal(5000), [Decimal("0.4"), Decimal("0.6")])


@pytest.fixture(autouse=True)
def nothing_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "_kept", facts._Kept())


def test_a_payload_is_read_once_and_an_unreadable_one_is_not_kept() -> None:
    reads: list[str] = []

    def read() -> facts.ListingFacts:
        reads.append("read")
        return FACTS

    assert facts.listing_facts("a", read) is FACTS and facts.listing_facts("a", read) is FACTS
    assert reads == ["read"] and "b" not in facts._kept.current

    def refused() -> facts.ListingFacts:
        raise PayloadError("field 'endDate' must be an ISO 8601 time")

    for _ in range(2):
        with pytest.raises(PayloadError, match="endDate"):
            facts.listing_facts("b", refused)
    assert "b" not in facts._kept.current


def test_facts_are_kept_for_the_next_sync_only_and_carried_on_when_read_again() -> None:
    facts.listing_facts("a", lambda: FACTS)
    facts.listing_facts("b", lambda: FACTS)
    facts.new_sync()
    assert facts._kept.last.keys() == {"a", "b"}
    facts.listing_facts("a", lambda: pytest.fail("read again"))  # the last sync's, carried on
    facts.new_sync()
    assert facts._kept.last.keys() == {"a"}  # "b" was not seen by the last sync: dropped
    assert facts.listing_facts("a", lambda: pytest.fail("read again")) is FACTS
