"""Fuzzed raw folders and corpus files: a valid result, or one line naming the file and exit 2.

Hypothesis starts from valid input (the handmade ForecastBench sample; a few dated documents)
and breaks it: fields replaced by any JSON value (NaN, huge numbers, nested lists, texts with
NUL, lone surrogates, control codes, dates at the ends of the calendar), fields removed, CSV cells
rewritten, lines of garbage. Whatever it makes, ``arena data import-forecastbench`` and
``arena corpus import`` either succeed with a dataset that loads and a corpus of the documents
kept, or print one line that names the file at fault and exit 2 having written nothing (no
dataset folder, no partial copy beside it, no corpus row).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from markets.replay import load_dataset
from tests.corpus.docs import doc
from tests.markets.test_replay_import import RECORDS, VALUES, make_raw

FUZZ = settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
ODD_TEXTS = [
    "",
    " ",
    "N/A",
    "\x00",
    "a\ud800b",
    "\x1b]52;c;aGk=\x07",
    '=HYPERLINK("http://x")',
    "2024-02-10",
    "0001-01-01",
    "9999-12-31",
    "2024-02-10T00:00:00",
    "0001-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59-05:00",
    "1e999",
    "NaN",
    "-0.5",
    "0.123456789012",
    "x" * 5000,
]
texts = st.one_of(st.text(max_size=20), st.sampled_from(ODD_TEXTS))
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, 1.0, 0.5, 2.0, -1.0, 1e308]),
    texts,
)
json_values = st.one_of(
    scalars, st.lists(scalars, max_size=2), st.dictionaries(st.text(max_size=4), scalars, max_size=2)
)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _one_line_naming(code: int, stderr: str, *names: str) -> None:
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("error: "), stderr
    assert any(name in stderr for name in names), stderr


# Raw ForecastBench folders.


@st.composite
def broken_records(draw: st.DrawFn) -> list[dict[str, Any]]:
    records = [dict(r) for r in RECORDS]
    for _ in range(draw(st.integers(0, 3))):
        record = draw(st.sampled_from(records))
        field = draw(st.sampled_from(sorted(record)))
        if draw(st.booleans()):
            record[field] = draw(json_values)
        else:
            del record[field]
    return records


@st.composite
def broken_values(draw: st.DrawFn) -> str:
    rows = [["source", "id", "date", "value"]]
    rows += [[*key.split(","), *row.split(",")] for key, values in VALUES.items() for row in values]
    for _ in range(draw(st.integers(0, 3))):
        row = draw(st.sampled_from(rows))
        row[draw(st.integers(0, 3))] = draw(texts)
    if draw(st.integers(0, 9)) == 0:
        rows = rows[:1]  # the header alone
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    return out.getvalue()


@FUZZ
@given(records=broken_records(), values=broken_values(), garbage=st.one_of(st.none(), texts))
def test_import_forecastbench_is_whole_or_one_line(
    records: list[dict[str, Any]], values: str, garbage: str | None
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        raw = make_raw(root / "raw", records=records, values="")
        # As bytes: a lone surrogate in a cell becomes bytes that are not UTF-8, as in a real file.
        (raw / "daily_values.csv").write_bytes(values.encode("utf-8", "surrogatepass"))
        if garbage is not None:
            with (raw / "markets.jsonl").open("a", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(garbage + "\n")
        out = root / "out"
        code, _, stderr = _run(
            "data", "import-forecastbench", str(raw), "--out", str(out), "--min-points", "1"
        )
        if code == 0:
            load_dataset(out)
        else:
            _one_line_naming(code, stderr, "markets.jsonl", "daily_values.csv")
            assert sorted(p.name for p in root.iterdir()) == ["raw"]  # no dataset, no partial copy


# Corpus files, on SQLite (the same parser and checks serve PostgreSQL; its refusals of NUL,
# surrogates and long texts have their own tests in test_absurd_input.py).


@st.composite
def corpus_lines(draw: st.DrawFn) -> list[str]:
    lines: list[str] = []
    for index in range(draw(st.integers(1, 5))):
        document: dict[str, Any] = doc(f"d{index}", index, f"title {index}", "text")
        kind = draw(st.integers(0, 5))
        if kind == 0:
            document[draw(st.sampled_from(sorted(document)))] = draw(json_values)
        elif kind == 1:
            del document[draw(st.sampled_from(sorted(document)))]
        elif kind == 2:
            document[draw(st.sampled_from(["url", "source"]))] = draw(texts)
        lines.append(draw(texts) if kind == 3 else json.dumps(document))
    return lines


@FUZZ
@given(lines=corpus_lines())
def test_corpus_import_is_whole_or_one_line(sqlite_head: Path, lines: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        shutil.copyfile(sqlite_head, root / "arena.db")  # an empty database at head
        url = f"sqlite:///{root / 'arena.db'}"
        path = root / "news.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8", errors="surrogatepass")
        code, stdout, stderr = _run("corpus", "import", str(path), "--name", "news", "--database-url", url)
        engine = make_engine(url)
        with engine.connect() as connection:
            stored = connection.execute(text("SELECT count(*) FROM corpus_document")).scalar_one()
            corpora = connection.execute(text("SELECT count(*) FROM corpus")).scalar_one()
        engine.dispose()
        if code == 0:
            assert corpora == 1 and f"{stored:,} documents" in stdout
        else:
            _one_line_naming(code, stderr, "news.jsonl")
            assert (stored, corpora) == (0, 0)
