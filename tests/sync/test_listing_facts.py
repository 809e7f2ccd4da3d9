"""Listing facts are read once per payload digest in a process, never kept when unreadable, and bounded."""

from __future__ import annotations

from decimal import Decimal

import pytest

from arena.sync import listing_facts as facts
from markets.http import PayloadError

FACTS = facts.ListingFacts(("1", "2"), None, Decimal(5000), [Decimal("0.4"), Decimal("0.6")])


def test_a_payload_is_read_once_and_an_unreadable_one_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "_known", {})
    reads: list[str] = []

    def read() -> facts.ListingFacts:
        reads.append("read")
        return FACTS

    assert facts.listing_facts("a", read) is FACTS and facts.listing_facts("a", read) is FACTS
    assert reads == ["read"] and facts.known_tokens("a") == ("1", "2") and facts.known_tokens("b") is None

    def refused() -> facts.ListingFacts:
        raise PayloadError("field 'endDate' must be an ISO 8601 time")

    for _ in range(2):
        with pytest.raises(PayloadError, match="endDate"):
            facts.listing_facts("b", refused)
    assert facts.known_tokens("b") is None


def test_the_table_is_emptied_once_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "_known", {})
    monkeypatch.setattr(facts, "KEPT", 3)
    for digest in "abcd":
        facts.listing_facts(digest, lambda: FACTS)
    assert [d for d in "abcd" if facts.known_tokens(d)] == ["d"]
