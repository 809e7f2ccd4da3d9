"""Absurd input is one line naming what is wrong, exit 2, and nothing written.

Configs, raw ForecastBench folders, replay datasets and corpus files, each with a value at the
edge of what Python, SQLite or PostgreSQL can hold: a duration of 99,999,999,999 days, dates in
the years 1 and 9999, NaN, a lone surrogate, JSON nested 100,000 deep, NUL, a 2.5 MB text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from tests.corpus.docs import doc, write_jsonl
from tests.engine.helpers import tiny_dataset
from tests.markets.test_replay_import import RECORDS, VALUES, make_raw

DEEP = "[" * 100_000 + "]" * 100_000


def _arena(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def _one_line(code: int, err: str, *expected: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for part in expected:
        assert part in err, err


# Configs: refused at launch, and the database the launch would have created is not left behind.


@pytest.mark.parametrize(
    ("setting", "expected"),
    [
        # The wording is the config parser's; the line names the key and the value.
        ('[schedule]\nevery = "99999999999d"', ("schedule.every: ", "99999999999d")),
        (
            'start = "0001-01-01T00:00:00+05:00"\n[schedule]\nevery = "7d"',
            ("start: ", "0001-01-01T00:00:00+05:00 is outside the years 1-9999 in UTC"),
        ),
    ],
    ids=["every", "start"],
)
def test_an_absurd_config_value_is_refused_and_leaves_no_database(
    tmp_path: Path, setting: str, expected: tuple[str, ...]
) -> None:
    config = tmp_path / "c.toml"
    dataset = tiny_dataset(tmp_path / "data")
    config.write_text(
        f'name = "c"\ndataset = "{dataset}"\n{setting}\n[[agents]]\nname = "hold"\nkind = "hold"\n',
        encoding="utf-8",
    )
    database = tmp_path / "new" / "arena.db"
    for command in (["replay", str(config)], ["cohort", "launch", str(config)]):
        code, _, err = _arena(*command, "--database-url", f"sqlite:///{database}")
        _one_line(code, err, *expected)
        assert not (tmp_path / "new").exists()


def test_a_failed_launch_keeps_a_database_that_was_there(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('name = "c"\n[schedule]\nevery = "0d"\n', encoding="utf-8")
    database = tmp_path / "arena.db"
    good = tmp_path / "good.toml"
    dataset = tiny_dataset(tmp_path / "data")
    good.write_text(f'name = "g"\ndataset = "{dataset}"\n[[agents]]\nname = "hold"\nkind = "hold"\n')
    assert _arena("cohort", "launch", str(good), "--database-url", f"sqlite:///{database}")[0] == 0
    code, _, err = _arena("replay", str(config), "--database-url", f"sqlite:///{database}")
    assert code == 2 and "every" in err and database.is_file()
    engine = make_engine(f"sqlite:///{database}")
    with engine.connect() as connection:
        assert connection.execute(text("SELECT count(*) FROM cohort")).scalar_one() == 1
    engine.dispose()


# Raw ForecastBench folders and replay datasets: nothing is written at --out.


def _with_value(value_row: str) -> Callable[[Path], Path]:
    def make(directory: Path) -> Path:
        values = "source,id,date,value\n" + "".join(
            f"{key},{row}\n" for key, rows in VALUES.items() for row in rows
        )
        return make_raw(directory, values=values + f"polymarket,0xyes,{value_row}\n")

    return make


def _with_record(**fields: Any) -> Callable[[Path], Path]:
    def make(directory: Path) -> Path:
        records = [dict(RECORDS[0], **fields), *RECORDS[1:]]
        return make_raw(directory, records=records)

    return make


def _with_line(line: str) -> Callable[[Path], Path]:
    def make(directory: Path) -> Path:
        raw = make_raw(directory)
        with (raw / "markets.jsonl").open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
        return raw

    return make


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_with_value("9999-12-31,0.5"), "'9999-12-31' is outside 1970-01-01 … 2199-12-31"),
        (_with_value("0001-01-01,0.5"), "'0001-01-01' is outside 1970-01-01 … 2199-12-31"),
        (_with_record(resolved_to=2.0), "field 'resolved_to': 2.0 is not a value in [0, 1]"),
        (_with_record(resolved_to=float("nan")), "field 'resolved_to': nan is not a value in [0, 1]"),
        (
            _with_record(market_info_open_datetime="0001-01-01T00:00:00+05:00"),
            "outside the years 1-9999 in UTC",
        ),
        (_with_record(question="a\ud800b"), "field 'question': holds a NUL character or a lone surrogate"),
        (_with_record(background="a\x00b"), "field 'background': holds a NUL character or a lone surrogate"),
        (_with_line(DEEP), "JSON nested too deeply"),
    ],
    ids=["9999", "0001", "resolved-2", "resolved-nan", "open-year-1", "surrogate", "nul", "deep"],
)
def test_an_absurd_raw_value_is_one_line_and_writes_nothing(
    tmp_path: Path, make: Callable[[Path], Path], expected: str
) -> None:
    raw, out = make(tmp_path / "raw"), tmp_path / "out"
    code, _, err = _arena("data", "import-forecastbench", str(raw), "--out", str(out), "--min-points", "3")
    _one_line(code, err, expected)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


def test_a_header_only_prices_file_is_one_line(tmp_path: Path) -> None:
    dataset = tiny_dataset(tmp_path / "data")
    prices = dataset / "prices.csv"
    prices.write_text(prices.read_text().splitlines()[0] + "\n")
    code, _, err = _arena("data", "rehash", str(dataset))
    _one_line(code, err, "prices.csv: no price rows, only the header")


# Corpus files, on both backends: no corpus row is written.


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            json.dumps(doc("x", 1, "t")).replace("2025-01-02T00:00:00+00:00", "0001-01-01T00:00:00+05:00"),
            "is outside the years 1-9999 in UTC",
        ),
        (
            json.dumps(doc("x", 1, "t")).replace("2025-01-02T00:00:00+00:00", "9999-12-31T23:59:59-05:00"),
            "is outside the years 1-9999 in UTC",
        ),
        (
            json.dumps(doc("x", 1, "t", "a")).replace('"a"', '"a\\ud800b"'),
            "'text' holds a lone surrogate (\\ud800), which is not text",
        ),
        (json.dumps(doc("x", 1, "t", "a\x00b")), "'text' holds a NUL character"),
        (DEEP, "not a corpus document (JSON nested too deeply)"),
        (
            json.dumps(doc("x", 1, "t", " ".join(f"w{i}" for i in range(400_000)))),
            "more than the 262,144 a document may have",
        ),
    ],
    ids=["year-1", "year-9999", "surrogate", "nul", "deep", "2.6-mb"],
)
def test_an_absurd_corpus_line_is_one_line_and_writes_nothing(
    db_url: str, tmp_path: Path, line: str, expected: str
) -> None:
    path = write_jsonl(tmp_path / "news.jsonl", [doc("fine", 0, "fine"), line])
    code, _, err = _arena("corpus", "import", str(path), "--name", "news", "--database-url", db_url)
    _one_line(code, err, "news.jsonl line 2", expected)
    code, out, _ = _arena("corpus", "list", "--database-url", db_url)
    assert code == 0 and "No corpora yet" in out
