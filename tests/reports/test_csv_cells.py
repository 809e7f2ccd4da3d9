"""The report's CSV tables never hand a spreadsheet a formula; numbers stay numbers; Parquet is raw."""

from __future__ import annotations

import csv
import os
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from sqlalchemy import Engine, text

from arena.core.clock import SimulatedClock
from arena.reports.bundle import build_report
from arena.reports.csv_cells import CSV_NOTE, inert_for_spreadsheets
from tests.dashboard.world import REPLAY

FORMULA = '=HYPERLINK("http://127.0.0.1:9/leak","click")'


def test_each_formula_start_is_quoted_and_other_cells_are_not() -> None:
    frame = pl.DataFrame(
        {
            "text": ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "a=b", "", None, "'=already"],
            "pnl": [Decimal("-12.5")] * 10,
            "ratio": [-0.5] * 10,
        }
    )
    out = inert_for_spreadsheets(frame)
    assert out["text"].to_list() == [
        "'=1+1",
        "'+1",
        "'-1",
        "'@SUM(A1)",
        "'\tx",
        "'\rx",
        "a=b",
        "",
        None,
        "'=already",
    ]
    assert out["pnl"].dtype == frame["pnl"].dtype and out["pnl"].to_list() == frame["pnl"].to_list()
    assert out["ratio"].to_list() == frame["ratio"].to_list()


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_formula_in_a_market_question_is_text_in_every_csv(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    with world.begin() as connection:
        connection.execute(text("UPDATE market SET question = :q"), {"q": FORMULA})
    report = build_report(world, REPLAY, tmp_path / "r", clock=clock, environ=os.environ, make_zip=False)
    tables = report.folder / "tables"

    for name in ("fills", "positions", "resolutions"):
        with (tables / f"{name}.csv").open(newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        assert rows and {row["question"] for row in rows} == {"'" + FORMULA}, name
        assert set(pl.read_parquet(tables / f"{name}.parquet")["question"]) == {FORMULA}
    with (tables / "fills.csv").open(newline="", encoding="utf-8") as handle:
        losses = [
            row["realized_pnl"] for row in csv.DictReader(handle) if row["realized_pnl"].startswith("-")
        ]
    assert losses and all(Decimal(cell) < 0 for cell in losses)  # a negative P/L is still a plain number
    assert CSV_NOTE in (report.folder / "report.md").read_text(encoding="utf-8")
