"""News search and corpus import at scale, on each backend (printed, never asserted on time).

A seeded synthetic corpus of 1,000,000 documents (8-word title, 60-word body, words drawn from a
50,000-word Zipf vocabulary, so a few hundred words are in most documents like English function
words, and most are rare), published over six years. ``arena corpus import``'s function imports
it whole; then 200 queries of 5 words picked from random documents (common words included, as a
model writes them) run through ``search_news`` with ``k=10`` and a random ``before``.

Floors, measured in the same run: for search, a plain indexed lookup of one document by id; for
import, the rows of a 100,000-document slice inserted in one transaction by a single
executemany (and, on SQLite, indexed by one statement), against importing the same slice.
Correctness is asserted: no hit is published at or after ``before``.
Run with ``make bench`` (or ``pytest tests/benchmarks/test_bench_corpus.py -s -m benchmark``);
``ARENA_BENCH_CORPUS_DOCS`` shrinks the corpus for a quick look.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import statistics
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, insert, select, text

from arena.corpus.documents import parse_document
from arena.corpus.query_plan import plan_matches
from arena.corpus.search import search_news, search_terms
from arena.corpus.store import CORPUS, DOCUMENT, import_corpus
from tests.benchmarks.results import Figure, record

DOCUMENTS = int(os.environ.get("ARENA_BENCH_CORPUS_DOCS", "1000000"))
SLICE = min(100_000, DOCUMENTS)
QUERIES = 200
VOCABULARY = 50_000
T0 = datetime(2020, 1, 1, tzinfo=UTC)
SPAN_S = 6 * 365 * 86_400
SYLLABLES = ("ka", "lo", "mi", "ner", "ta", "vo", "ri", "sen", "du", "pa", "gel", "mor", "ti", "zan", "ber")


def write_corpus(path: Path, documents: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    vocabulary = list(words)
    cumulative = list(itertools.accumulate(1 / rank for rank in range(1, VOCABULARY + 1)))
    with path.open("w", encoding="utf-8") as out:
        for i in range(documents):
            drawn = rng.choices(vocabulary, cum_weights=cumulative, k=68)
            when = T0 + timedelta(seconds=rng.randrange(SPAN_S))
            row = {"id": f"n{i}", "published_at": when.isoformat(), "title": " ".join(drawn[:8])}
            out.write(json.dumps({**row, "text": " ".join(drawn[8:]), "source": "synthetic"}) + "\n")


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("corpus")
    full, part = folder / "news.jsonl", folder / "slice.jsonl"
    started = time.perf_counter()
    write_corpus(full, DOCUMENTS)
    with full.open("rb") as source, part.open("wb") as target:
        target.writelines(itertools.islice(source, SLICE))
    print(
        f"\ngenerated {DOCUMENTS:,} documents ({full.stat().st_size / 2**20:,.0f} MiB) "
        f"in {time.perf_counter() - started:.0f} s"
    )
    return full, part


def floor_insert(engine: Engine, path: Path) -> float:
    """Seconds to insert the file's rows (parsed beforehand, untimed) in one transaction."""
    documents = [parse_document(line, "") for line in path.read_bytes().splitlines()]
    with engine.begin() as connection:
        corpus_id = connection.execute(
            insert(CORPUS)
            .values(name="floor", source_file="-", document_count=0, dropped_json={}, deny_list_json=[])
            .returning(CORPUS.c.id)
        ).scalar_one()
    rows: list[dict[str, Any]] = [
        {
            "corpus_id": corpus_id,
            "doc_id": d.id,
            "published_at": d.published_at,
            "title": d.title,
            "text": d.text,
            "url": d.url,
            "source": d.source,
        }
        for d in documents
    ]
    started = time.perf_counter()
    with engine.begin() as connection:
        first = connection.execute(text("SELECT coalesce(max(id), 0) FROM corpus_document")).scalar_one()
        connection.execute(insert(DOCUMENT), rows)
        if engine.dialect.name == "sqlite":
            connection.execute(
                text(
                    "INSERT INTO corpus_document_fts(rowid, title, text) "
                    "SELECT id, title, text FROM corpus_document WHERE id > :first ORDER BY id"
                ),
                {"first": first},
            )
    return time.perf_counter() - started


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


@pytest.mark.benchmark
@pytest.mark.timeout(3600)  # a million documents take minutes to import on a shared machine
def test_bench_corpus_import_and_search(engine: Engine, corpus_files: tuple[Path, Path]) -> None:
    full, part = corpus_files
    backend = engine.dialect.name
    started = time.perf_counter()
    import_corpus(engine, part, "slice")
    slice_s = time.perf_counter() - started
    floor_s = floor_insert(engine, part)
    started = time.perf_counter()
    info = import_corpus(engine, full, "news")
    full_s = time.perf_counter() - started
    assert info.documents == DOCUMENTS
    rng = random.Random(3)
    lines = part.read_text(encoding="utf-8").splitlines()
    queries = []
    for line in rng.sample(lines, QUERIES):
        words = (json.loads(line)["title"] + " " + json.loads(line)["text"]).split()
        queries.append((" ".join(rng.sample(words[:28], 5)), T0 + timedelta(seconds=rng.randrange(SPAN_S))))
    search_ms: list[float] = []
    floor_ms: list[float] = []
    paths: Counter[str] = Counter()
    by_path: dict[str, list[float]] = {}
    with engine.connect() as connection:
        news_id = connection.execute(select(CORPUS.c.id).where(CORPUS.c.name == "news")).scalar_one()
        lookup = select(DOCUMENT.c.title).where(DOCUMENT.c.corpus_id == news_id)
        for query, before in queries:
            started = time.perf_counter()
            hits = search_news(connection, "news", query, k=10, before=before)
            search_ms.append((time.perf_counter() - started) * 1000)
            assert all(hit.published_at < before for hit in hits)
            plan = plan_matches(connection, backend, search_terms(query))
            path = "every word common" if len(plan.matches) > 1 else "rarest words"
            paths[path] += 1
            by_path.setdefault(path, []).append(search_ms[-1])
            doc_id = f"n{rng.randrange(DOCUMENTS)}"
            started = time.perf_counter()
            assert connection.execute(lookup.where(DOCUMENT.c.doc_id == doc_id)).all()
            floor_ms.append((time.perf_counter() - started) * 1000)
    median, p95, p99 = statistics.median(search_ms), percentile(search_ms, 0.95), percentile(search_ms, 0.99)
    floor = statistics.median(floor_ms)
    common = by_path.get("every word common", [])
    record(
        f"corpus_{backend}",
        measures=f"`arena corpus import` and `search_news` over {DOCUMENTS:,} documents ({backend})",
        command="pytest tests/benchmarks/test_bench_corpus.py -s -m benchmark",
        figures=[
            Figure(f"import of {SLICE:,} documents", slice_s, "s", floor=floor_s),
            Figure(f"import of {DOCUMENTS:,} documents", full_s, "s"),
            Figure(f"search, median of {QUERIES} queries", median, "ms", floor=floor),
            Figure("search, p95", p95, "ms", target="≤ 50 ms", met=p95 <= 50),
            Figure("search, p99", p99, "ms"),
            Figure(
                "search when every word is common, p95", percentile(common, 0.95) if common else 0.0, "ms"
            ),
        ],
    )
