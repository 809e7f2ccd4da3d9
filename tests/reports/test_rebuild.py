"""Reports are reproducible, refuse to overwrite, and never leave half a report behind."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from arena.reports import bundle
from arena.reports.bundle import build_report
from arena.reports.content import ReportError
from markets.placement import PlacementRefused
from tests.dashboard.world import LIVE, REPLAY


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_rebuilding_a_finished_cohort_gives_identical_tables(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    first = build_report(world, REPLAY, tmp_path / "out" / "one", clock=clock, environ=os.environ)
    clock.advance(timedelta(days=3))
    second = build_report(world, REPLAY, tmp_path / "out" / "two", clock=clock, environ=os.environ)

    one, two = _tree(first.folder), _tree(second.folder)
    tables = [name for name in one if name.startswith("tables/")]
    assert len(tables) == 24  # 12 tables, Parquet and CSV
    assert {t: one[t] for t in tables} == {t: two[t] for t in tables}
    # Besides the tables, only the creation time differs, and the two readable reports that print it.
    a, b = json.loads(one["manifest.json"]), json.loads(two["manifest.json"])
    assert (a.pop("created_at"), b.pop("created_at")) == ("2025-03-01T09:30:00Z", "2025-03-04T09:30:00Z")
    for readable in ("report.html", "report.md"):
        assert a["files"].pop(readable) != b["files"].pop(readable)
    assert a == b


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_an_existing_report_is_not_overwritten_without_force(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ)
    with pytest.raises(PlacementRefused, match="already exists; choose another path, or pass --force"):
        build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ)

    replaced = build_report(
        world, LIVE, tmp_path / "out" / "demo", clock=clock, environ=os.environ, replace=True
    )
    assert "Live now" in (replaced.folder / "report.md").read_text()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["demo", "demo.zip"]  # no staging left


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_an_unknown_cohort_is_a_one_line_error(world: Engine, clock: SimulatedClock, tmp_path: Path) -> None:
    with pytest.raises(ReportError) as failure:
        build_report(world, "nope", tmp_path / "out" / "x", clock=clock, environ=os.environ)
    assert str(failure.value) == "no cohort with id 'nope' (see `arena cohort list`)"
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_failure_midway_leaves_nothing_behind(
    world: Engine, clock: SimulatedClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_args: object) -> str:
        raise OSError("disk full")

    monkeypatch.setattr(bundle.html, "render", broken)
    with pytest.raises(OSError, match="disk full"):
        build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ)
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []
