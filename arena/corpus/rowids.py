"""SQLite: a document's id (its full-text rowid) says when it was published.

FTS5 walks posting lists in rowid order and can bound a walk by rowid, but it checks anything
else (the corpus, the publish time) one matching row at a time, through the join. So on SQLite a
document's id is its publish second shifted left by ``TIE_BITS``, plus a tie-break: ids are in
publish order whatever order the file was in, "published before ``before``" is the rowid bound
``id < before_bound(before)`` that FTS5 applies while walking, and "the newest documents holding
these words" is a walk backwards from that bound which stops after ``k`` rows.

The tie-break keeps ids unique when documents share a second (a dump that gives only a date
puts a whole day's articles on one instant): an import numbers the documents of each second
from one past the largest tie-break in the table, so it never collides with another corpus.
PostgreSQL keeps its serial ids: its index on ``(corpus_id, published_at)`` serves the same end.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

SECOND_BITS = 39  # seconds since 0001-01-01: every instant a datetime holds (to the year 9999)
TIE_BITS = 24  # 16.7 million documents per second, over every corpus; with the seconds, 63 bits
TIE_MASK = (1 << TIE_BITS) - 1
_ORIGIN = datetime(1, 1, 1, tzinfo=UTC)
_SECOND = timedelta(seconds=1)


def publish_second(published_at: datetime) -> int:
    """Whole seconds from 0001-01-01 UTC to ``published_at`` (rounded down)."""
    return (published_at - _ORIGIN) // _SECOND


def document_rowid(published_at: datetime, tie: int) -> int:
    """The id of a document published at ``published_at`` with tie-break ``tie``; ValueError
    when either does not fit its bits."""
    second = publish_second(published_at)
    if not 0 <= second < 1 << SECOND_BITS or not 0 <= tie <= TIE_MASK:
        raise ValueError(f"publish time {published_at.isoformat()} (tie-break {tie}) does not fit a rowid")
    return second << TIE_BITS | tie


def before_bound(before: datetime) -> int:
    """The smallest id no document published before ``before`` can have: the first id of
    ``before``'s second, or of the next second when ``before`` is not a whole second (documents
    earlier in that second come before it). The publish-time bound itself is still checked on
    each row: this only lets the index skip what lies past it."""
    second = publish_second(before)
    if before - _ORIGIN != second * _SECOND:
        second += 1
    return min(max(second, 0), 1 << SECOND_BITS) << TIE_BITS
