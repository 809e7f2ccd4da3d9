"""`import_forecastbench` on a tiny handmade raw folder in the ForecastBench layout."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from arena.commands.data import app
from markets.replay import DatasetError, import_forecastbench, load_dataset
from markets.types import ResolutionKind


def _record(source: str, market_id: str, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "source": source,
        "id": market_id,
        "question": f"Question {market_id}?",
        "background": f"Background of {market_id}.",
        "resolution_criteria": "Resolves to the outcome of the question found at https://example.org.",
        "url": f"https://example.org/{market_id}",
        "market_info_open_datetime": "2024-01-05",
        "market_info_close_datetime": "2024-03-01T23:59:00+00:00",
        "question_sets": ["2024-01-01-llm.json"],
        "freeze_values": [],
        "resolved": True,
        "resolution_date": "2024-02-10",
        "resolved_to": 1.0,
        "n_daily_values": 3,
        "first_date": "2024-02-01",
        "last_date": "2024-02-03",
    }
    record.update(fields)
    return record


RECORDS = [
    _record("polymarket", "0xyes"),
    _record("manifold", "mno", resolved_to=0.0, market_info_open_datetime="2023-12-01T10:00:00+00:00"),
    _record("manifold", "open", resolved=False, resolution_date=None, resolved_to=None),
    _record("polymarket", "0xnotext", question=None, background=None),
    _record("polymarket", "0xshort"),
    _record("acled", "Sudan.fatalities"),
    _record("manifold", "mkt", resolved_to=0.37),
]
VALUES = {
    "polymarket,0xyes": ["2024-02-01,0.40", "2024-02-02,0.455", "2024-02-05,0.9"],
    "manifold,mno": ["2024-02-01,0.3", "2024-02-02,0.2", "2024-02-03,0.1"],
    "manifold,open": ["2024-02-01,0.5", "2024-02-02,0.5", "2024-02-03,0.5"],
    "polymarket,0xnotext": ["2024-02-01,0.5", "2024-02-02,0.5", "2024-02-03,0.5"],
    "polymarket,0xshort": ["2024-02-01,0.5"],
    "acled,Sudan.fatalities": ["2024-02-01,12", "2024-02-02,13", "2024-02-03,14"],
    "manifold,mkt": ["2024-02-01,0.5", "2024-02-02,0.5", "2024-02-03,0.5"],
}


def make_raw(directory: Path, records: list[dict[str, Any]] = RECORDS, values: str | None = None) -> Path:
    directory.mkdir(parents=True)
    (directory / "markets.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if values is None:  # the daily values of the markets given (a stray value is an error)
        given = {f"{r.get('source')},{r.get('id')}" for r in records}
        values = "source,id,date,value\n" + "".join(
            f"{key},{row}\n" for key, rows in VALUES.items() if key in given for row in rows
        )
    (directory / "daily_values.csv").write_text(values)
    (directory / "SOURCE.md").write_text("# Tiny sample\n\nAttribution: the test suite.\n")
    (directory / "orig").mkdir()
    (directory / "orig" / "LICENSE").write_text("Attribution-ShareAlike 4.0 International (sample)\n")
    (directory / "orig" / "README.md").write_text("readme\n")
    return directory


def run(raw: Path, out: Path, **options: Any) -> Any:
    return import_forecastbench(
        raw, out, created_with="arena data import-forecastbench (test)", min_points=3, **options
    )


def test_import_keeps_resolved_binary_markets_with_text_and_enough_points(tmp_path: Path) -> None:
    summary = run(make_raw(tmp_path / "raw"), tmp_path / "out")
    dataset = summary.dataset
    assert list(dataset.markets) == ["manifold:mno", "polymarket:0xyes"]
    assert summary.considered == 7
    assert summary.skipped == {
        "unresolved (a replay could never settle it)": 1,
        "no question text": 1,
        "fewer than 3 daily values": 1,
        "not a Polymarket/Manifold market": 1,
        "not resolved to exactly YES or NO": 1,
    }
    yes = dataset.markets["polymarket:0xyes"]
    assert yes.question == "Question 0xyes?"
    assert yes.description == "Background of 0xyes."
    assert yes.url == "https://example.org/0xyes"
    assert yes.open_time == datetime(2024, 1, 5, tzinfo=UTC)  # bare Polymarket date -> 00:00 UTC
    assert yes.close_time == datetime(2024, 3, 1, 23, 59, tzinfo=UTC)
    assert yes.resolution_time is None
    assert dataset.markets["manifold:mno"].open_time == datetime(2023, 12, 1, 10, tzinfo=UTC)
    assert dataset.resolutions["polymarket:0xyes"].kind is ResolutionKind.YES
    assert dataset.resolutions["manifold:mno"].kind is ResolutionKind.NO
    assert dataset.resolutions["manifold:mno"].resolved_at == datetime(2024, 2, 10, tzinfo=UTC)
    series = dataset.series["polymarket:0xyes"]
    # Dated D -> usable from D+1 00:00 UTC; decimal text kept exactly.
    assert series.times == (
        datetime(2024, 2, 2, tzinfo=UTC),
        datetime(2024, 2, 3, tzinfo=UTC),
        datetime(2024, 2, 6, tzinfo=UTC),
    )
    assert series.snapshots[1].prices == {"YES": Decimal("0.455"), "NO": Decimal("0.545")}
    assert dataset.info.version == "2024-02-05"
    assert dataset.info.license == "CC BY-SA 4.0"


def test_import_carries_attribution_and_license(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(make_raw(tmp_path / "raw"), out)
    source = (out / "SOURCE.md").read_text()
    assert source.startswith("# Tiny sample\n\nAttribution: the test suite.\n")
    assert "## Further modified for Bettor Arena" in source
    assert "2 of 7 markets kept" in source
    assert "  - no question text: 1" in source
    assert (out / "LICENSE").read_text() == (out / "orig" / "LICENSE").read_text()
    assert (out / "orig" / "README.md").read_text() == "readme\n"
    assert load_dataset(out).info.created_with == "arena data import-forecastbench (test)"


def test_prices_csv_is_readable_text(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run(make_raw(tmp_path / "raw"), out)
    assert (out / "prices.csv").read_text().splitlines()[:3] == [
        "market_id,date,price",
        "manifold:mno,2024-02-01,0.3",
        "manifold:mno,2024-02-02,0.2",
    ]


@pytest.mark.parametrize(
    ("records", "values", "expected"),
    [
        (
            RECORDS[:1],
            "source,id,date,value\npolymarket,0xyes,2024-02-01,0.4\npolymarket,0xyes,2024-02-02,1.4\n"
            "polymarket,0xyes,2024-02-03,0.4\n",
            "daily_values.csv row 2, field 'value': '1.4' is not a price in [0, 1]",
        ),
        (
            RECORDS[:1],
            "source,id,date,value\npolymarket,0xyes,2024-02-01,0.4\npolymarket,0xyes,2024-02-01,0.5\n"
            "polymarket,0xyes,2024-02-03,0.4\n",
            "daily_values.csv row 2: duplicate of row 1",
        ),
        (RECORDS[:1], "source,id,day,value\n", "daily_values.csv: missing column(s) 'date'"),
        (
            RECORDS[:1],
            "source,id,date,value\npolymarket,0xyes,2024-02-01,0.4\npolymarket,0xyes,02/02/2024,0.5\n"
            "polymarket,0xyes,2024-02-03,0.4\n",
            "daily_values.csv row 2, field 'date': '02/02/2024' is not a date",
        ),
        (
            [_record("polymarket", "0xyes", resolved="yes")],
            None,
            "markets.jsonl line 1, field 'resolved': 'yes' has",
        ),
        ([RECORDS[1], {"source": "manifold"}], None, "markets.jsonl line 2, field 'id': is missing"),
        ([RECORDS[0], RECORDS[0]], None, "markets.jsonl line 2, field 'id': duplicate of line 1"),
        (
            [_record("polymarket", "0xyes", market_info_close_datetime="soon")],
            None,
            "markets.jsonl line 1, field 'market_info_close_datetime': 'soon' is not an ISO 8601 time",
        ),
        (
            [_record("polymarket", "0xyes", resolution_date="2024-02-01")],
            None,
            "markets.jsonl line 1, field 'resolution_date': 2024-02-01 is before the market's first "
            "daily value is usable (daily_values.csv row 1, dated 2024-02-01, usable from "
            "2024-02-02T00:00:00+00:00)",
        ),
        (
            RECORDS[:1],
            "source,id,date,value\npolymarket,0xyes,2024-02-01,0.4\npolymarket,0xyse,2024-02-02,0.5\n"
            "polymarket,0xyes,2024-02-03,0.4\n",
            "daily_values.csv row 2, field 'id': no market (polymarket, '0xyse') in markets.jsonl",
        ),
    ],
)
def test_bad_raw_input_is_named_and_nothing_is_written(
    tmp_path: Path, records: list[dict[str, Any]], values: str | None, expected: str
) -> None:
    raw = make_raw(tmp_path / "raw", records, values)
    with pytest.raises(DatasetError) as caught:
        run(raw, tmp_path / "out")
    assert str(caught.value).startswith(f"{tmp_path / 'raw'}/{expected}")
    assert "\n" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["raw"]


def test_a_resolution_on_the_day_of_the_first_value_is_refused_but_the_day_after_is_fine(
    tmp_path: Path,
) -> None:
    """Dated D means known from D+1 00:00 UTC: a market resolved at D+1 00:00 was open for an instant."""
    values = "source,id,date,value\n" + "".join(f"polymarket,0xyes,2024-02-0{d},0.4\n" for d in (1, 2, 3))
    same_day = make_raw(
        tmp_path / "a", [_record("polymarket", "0xyes", resolution_date="2024-02-01")], values
    )
    with pytest.raises(DatasetError, match="line 1, field 'resolution_date': 2024-02-01 is before"):
        run(same_day, tmp_path / "out-a")
    next_day = make_raw(
        tmp_path / "b", [_record("polymarket", "0xyes", resolution_date="2024-02-02")], values
    )
    dataset = run(next_day, tmp_path / "out-b").dataset
    assert dataset.resolutions["polymarket:0xyes"].resolved_at == datetime(2024, 2, 2, tzinfo=UTC)


def test_invalid_json_line(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    (raw / "markets.jsonl").write_text(json.dumps(RECORDS[0]) + "\n{broken\n")
    with pytest.raises(DatasetError, match=r"raw/markets\.jsonl line 2: not valid JSON"):
        run(raw, tmp_path / "out")


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    (raw / "markets.jsonl").write_bytes(json.dumps(RECORDS[0]).encode() + b'\n{"id": "caf\xe9"}\n')
    with pytest.raises(DatasetError, match=r"raw/markets\.jsonl line 2: not UTF-8 text \(invalid"):
        run(raw, tmp_path / "out")


def test_an_output_that_cannot_be_written_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    (tmp_path / "file").write_text("not a folder\n")
    args = ["import-forecastbench", str(raw), "--out", str(tmp_path / "file" / "out"), "--min-points", "3"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1 and result.exception is not None and isinstance(result.exception, SystemExit)
    assert result.output.startswith("error: [Errno 17] File exists: ") and result.output.count("\n") == 1


def test_attribution_is_required(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    (raw / "orig" / "LICENSE").unlink()
    with pytest.raises(DatasetError, match="missing orig/LICENSE"):
        run(raw, tmp_path / "out")


def test_import_command(tmp_path: Path) -> None:
    raw, out = make_raw(tmp_path / "raw"), tmp_path / "out"
    args = ["import-forecastbench", str(raw), "--out", str(out), "--min-points", "3", "--version", "v9"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert f"Kept 2 of 7 markets; wrote {out}" in result.output
    assert "left out, unresolved (a replay could never settle it): 1" in result.output
    dataset = load_dataset(out)
    assert dataset.info.version == "v9"
    # Absolute paths are recorded as their folder names: no machine's home directory is published.
    assert dataset.info.created_with == (
        "arena data import-forecastbench raw --out out --min-points 3 --name forecastbench --version v9"
    )
    assert str(tmp_path) not in (out / "SOURCE.md").read_text()
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 2
    assert again.output == f"error: {out} already exists; pass --force (overwrite=True) to replace it\n"
    assert CliRunner().invoke(app, [*args, "--force"]).exit_code == 0
