"""CSV cells that a spreadsheet would run as a formula, written so that it shows them as text.

A market question or a model's reasoning such as ``=HYPERLINK("http://…","click")`` is data, but
Excel, LibreOffice and Google Sheets evaluate a CSV cell that begins with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return. OWASP's rule for CSV injection: prefix such a cell with a
single quote, which spreadsheets read as "this is text" and do not display. Only text columns are
touched: numbers (money is a decimal column, so a P/L of -12.5 stays the number -12.5) and times
are written as they are, and the Parquet tables keep every value exactly as stored.
"""

from __future__ import annotations

import polars as pl

FORMULA_START = r"^[=+\-@\t\r]"
CSV_NOTE = (
    "In the CSV tables, a text cell that begins with =, +, -, @, a tab or a carriage return is "
    "written with a single quote (') in front, so that a spreadsheet shows it as text instead of "
    "running it as a formula (OWASP's rule against CSV injection); numbers are written as they are, "
    "and the Parquet tables keep every value exactly as stored."
)


def inert_for_spreadsheets(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every text cell that a spreadsheet would read as a formula prefixed with ``'``."""
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    starts_formula = {name: pl.col(name).str.contains(FORMULA_START) for name in text}
    return frame.with_columns(
        pl.when(starts).then(pl.lit("'") + pl.col(name)).otherwise(pl.col(name)).alias(name)
        for name, starts in starts_formula.items()
    )
