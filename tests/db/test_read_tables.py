"""The light read tables (``arena.db.read_tables``) name real columns, with the models' types.

Scoring selects through them instead of ``arena.db.models``; a column renamed or retyped in the
models must fail here, not as a wrong or failing leaderboard.
"""

from __future__ import annotations

import pytest
from sqlalchemy import JSON, Boolean, Column, Date, Float, Integer, String, column, table
from sqlalchemy.sql.expression import TableClause
from sqlalchemy.types import TypeDecorator

from arena.db import models
from arena.db.read_tables import TABLES
from arena.db.types import ExactDecimal, UTCDateTime


def _model_column(table_name: str, name: str) -> Column[object]:
    assert table_name in models.metadata.tables, f"no table {table_name!r} in arena.db.models"
    columns = models.metadata.tables[table_name].c
    assert name in columns, f"no column {table_name}.{name} in arena.db.models"
    return columns[name]


def _same_type(light: object, model: object) -> bool:
    """Same reading: exact decimals of one scale, UTC datetimes, JSON, or the same plain type."""
    if isinstance(light, ExactDecimal):
        return isinstance(model, ExactDecimal) and model.scale == light.scale
    if isinstance(light, UTCDateTime):
        return isinstance(model, UTCDateTime)
    if isinstance(model, TypeDecorator):  # sqlmodel's AutoString is a String underneath
        model = model.impl_instance
    for kind in (JSON, Boolean, Date, Float, Integer, String):
        if isinstance(light, kind):
            return isinstance(model, kind)
    return False


@pytest.mark.parametrize("light", TABLES, ids=lambda t: t.name)
def test_every_read_column_is_the_models_column(light: TableClause) -> None:
    for read in light.c:
        model = _model_column(light.name, read.name)
        assert _same_type(read.type, model.type), (
            f"{light.name}.{read.name}: read as {read.type!r}, the models say {model.type!r}"
        )


def test_the_check_sees_a_wrong_type_and_a_missing_column() -> None:
    """The control: the same checks fail on a clause that disagrees with the models."""
    assert not _same_type(String(), models.metadata.tables["fill"].c["amount"].type)
    assert not _same_type(ExactDecimal(6), models.metadata.tables["fill"].c["price"].type)
    with pytest.raises(AssertionError, match=r"no column fill\.amout"):
        _model_column(table("fill", column("amout", String)).name, "amout")
