"""The corpus file format: every document states when it was published, with its zone."""

from __future__ import annotations

import io
from datetime import UTC, datetime

import pytest

from arena.corpus.documents import CorpusError, Document, parse_document, read_documents


def test_a_document_round_trips_through_its_json_line() -> None:
    document = Document("a1", datetime(2025, 3, 1, 12, tzinfo=UTC), "Title", "Body", "https://x.org/a", "X")
    assert parse_document(document.to_json(), "here") == document


def test_publish_times_in_any_zone_become_utc() -> None:
    line = '{"id": 7, "published_at": "2025-03-01T12:00:00-05:00", "title": "t", "text": ""}'
    document = parse_document(line, "f line 1")
    assert document.id == "7"
    assert document.published_at == datetime(2025, 3, 1, 17, tzinfo=UTC)
    assert document.url is None and document.source is None


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"id": "d9", "published_at": "2025-03-01T12:00:00", "title": "t", "text": "x"}', "zone"),
        ('{"id": "d9", "published_at": "2025-03-01", "title": "t", "text": "x"}', "zone"),
        ('{"id": "d9", "title": "t", "text": "x"}', "'published_at' is missing"),
        ('{"id": "d9", "published_at": 1740830400, "title": "t", "text": "x"}', "'published_at' is missing"),
        ('{"id": "d9", "published_at": "yesterday+00:00", "title": "t", "text": "x"}', "not an ISO 8601"),
        ('{"id": "d9", "published_at": "2025-03-01T12:00:00Z", "title": "", "text": " "}', "both empty"),
        ('{"id": "d9", "published_at": "2025-03-01T12:00:00Z", "text": "x"}', "'title' must be a string"),
        (
            '{"id": "d9", "published_at": "2025-03-01T12:00:00Z", "title": "t", "text": "x", "url": 3}',
            "'url'",
        ),
    ],
)
def test_a_bad_document_is_refused_naming_its_line_and_id(line: str, problem: str) -> None:
    with pytest.raises(CorpusError) as caught:
        parse_document(line, "news.jsonl line 4")
    message = str(caught.value)
    assert message.startswith("news.jsonl line 4 (id 'd9'): ") and problem in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("line", "problem"),
    [("not json", "not a JSON document"), ("[1, 2]", "expected a JSON object"), ('{"title": "t"}', "'id'")],
)
def test_a_line_that_is_no_document_is_refused_naming_its_line(line: str, problem: str) -> None:
    with pytest.raises(CorpusError, match=rf"^news.jsonl line 2: .*{problem}"):
        parse_document(line, "news.jsonl line 2")


def test_reading_skips_blank_lines_and_refuses_a_duplicate_id() -> None:
    first = '{"id": "a", "published_at": "2025-01-01T00:00:00Z", "title": "t", "text": ""}\n'
    stream = io.BytesIO((first + "\n" + first).encode())
    with pytest.raises(CorpusError, match=r"line 3 \(id 'a'\): duplicate id \(first on line 1\)"):
        list(read_documents(stream, "f.jsonl"))
    numbers = [n for n, _ in read_documents(io.BytesIO((first + "\n").encode()), "f.jsonl")]
    assert numbers == [1]
