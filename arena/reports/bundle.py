"""``arena report``: write a cohort's report as a self-contained folder, and a zip of it.

The folder holds ``report.html`` (opens offline), ``report.md``, ``tables/`` (every table as
Parquet and CSV, no row limit), ``config.toml`` (the frozen config, which ``arena replay
--from-report`` relaunches), ``metrics.csv`` (every metric of every agent, as the report shows
them) and ``manifest.json`` (provenance and a sha256 per file). It is
written in a hidden staging folder next to the target and renamed into place at the end, so a
crash or an error never leaves half a report behind; ``--force`` replaces only a previous report
(``markets.placement``), never another folder.

Rebuilding the report of a finished cohort gives byte-identical tables: rows are sorted on
unique keys and both writers are deterministic. Only the creation time in the manifest and the
two readable reports differ (it comes from the injected clock).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import polars as pl
from sqlalchemy import Engine

from arena.cohorts.export import CONFIG_FILE
from arena.core.clock import Clock
from arena.reports import html, markdown
from arena.reports.content import ReportContent, gather
from arena.reports.csv_cells import inert_for_spreadsheets
from arena.reports.manifest import MANIFEST, is_report_zip, manifest, report_files, sha256_file
from arena.reports.redact import Redactor
from arena.reports.summary import Summary, summarize
from markets.placement import check_file, check_folder, staged_file, staged_folder

CSV_TIME = "%Y-%m-%dT%H:%M:%S%.6fZ"
METRICS_FILE = "metrics.csv"
ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the zip depends on the content only


@dataclass(frozen=True)
class Report:
    folder: Path
    zip: Path | None
    rows: dict[str, int]


def build_report(
    engine: Engine,
    cohort_id: str,
    out: Path,
    *,
    clock: Clock,
    environ: Mapping[str, str],
    prompts: bool = True,
    make_zip: bool = True,
    replace: bool = False,
) -> Report:
    """Write the report of ``cohort_id`` to ``out`` (and ``out.zip``); see the module docstring.

    ``replace`` replaces only a report the arena wrote there before (``markets.placement``):
    any other folder at ``out``, or one holding the database being reported, and any zip that is
    not this report's own, raise ``PlacementRefused`` before anything is read or written."""
    keep = _database_files(engine)
    target = check_folder(out, "report", replace=replace, record=report_files, keep=keep)
    archive_path = target.with_name(f"{target.name}.zip")
    if make_zip:
        check_file(archive_path, "report zip", replace=replace, record=is_report_zip, keep=keep)
    content = gather(engine, cohort_id, prompts=prompts, redactor=Redactor.from_environ(environ))
    created_at = clock.now()
    with ExitStack() as placing:  # the folder is moved into place first, then its zip
        archive = (
            placing.enter_context(
                staged_file(archive_path, "report zip", replace=replace, record=is_report_zip, keep=keep)
            )
            if make_zip
            else None
        )
        staging = placing.enter_context(
            staged_folder(target, "report", replace=replace, record=report_files, keep=keep)
        )
        _write_bundle(staging, content, created_at=created_at, prompts=prompts)
        if archive is not None:
            _zip(staging, archive, target.name)
    return Report(
        target, archive_path if make_zip else None, {name: len(f) for name, f in content.tables.items()}
    )


def _write_bundle(folder: Path, content: ReportContent, *, created_at: datetime, prompts: bool) -> None:
    """The report's files in ``folder``: tables, the two readable reports, then the manifest."""
    summary = summarize(content, created_at)
    (folder / CONFIG_FILE).write_text(summary.config, encoding="utf-8")
    files = [*_write_tables(folder / "tables", content.tables), CONFIG_FILE, _write_metrics(folder, summary)]
    listed = ["report.html", "report.md", *files, MANIFEST]
    (folder / "report.md").write_text(markdown.render(summary, listed), encoding="utf-8")
    (folder / "report.html").write_text(html.render(summary, content, listed), encoding="utf-8")
    digests = {name: sha256_file(folder / name) for name in ("report.html", "report.md", *files)}
    document = manifest(content, digests, created_at=created_at, prompts=prompts)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    (folder / MANIFEST).write_text(text, encoding="utf-8")


def _database_files(engine: Engine) -> list[Path]:
    """The SQLite files of ``engine`` (none on PostgreSQL): a report never replaces a folder holding them."""
    if engine.url.get_backend_name() != "sqlite" or not engine.url.database:
        return []
    database = Path(engine.url.database)
    return [database, *(database.with_name(database.name + suffix) for suffix in ("-wal", "-shm"))]


def _write_tables(folder: Path, tables: Mapping[str, pl.DataFrame]) -> list[str]:
    """Each table as ``NAME.parquet`` (values as stored) and ``NAME.csv`` (text that a spreadsheet
    would run as a formula made inert, ``csv_cells``); returns their paths relative to the bundle."""
    folder.mkdir()
    written: list[str] = []
    for name, frame in sorted(tables.items()):
        frame.write_parquet(folder / f"{name}.parquet", compression="zstd", statistics=True)
        inert_for_spreadsheets(frame).write_csv(folder / f"{name}.csv", datetime_format=CSV_TIME)
        written += [f"tables/{name}.csv", f"tables/{name}.parquet"]
    return written


def _write_metrics(folder: Path, summary: Summary) -> str:
    """``metrics.csv``: every registered metric (rows) of every agent (columns), as the report
    shows them, formula-like cells made inert (``csv_cells``)."""
    frame = pl.DataFrame(summary.metrics, schema=dict.fromkeys(summary.metrics[0], pl.String))
    inert_for_spreadsheets(frame).write_csv(folder / METRICS_FILE)
    return METRICS_FILE


def _zip(folder: Path, archive_path: Path, name: str) -> None:
    """``folder`` zipped at ``archive_path``, entries under ``name/``, sorted, with fixed times."""
    with zipfile.ZipFile(archive_path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            entry = zipfile.ZipInfo(f"{name}/{path.relative_to(folder).as_posix()}", ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            with path.open("rb") as source, archive.open(entry, "w") as sink:
                shutil.copyfileobj(source, sink, 1 << 20)
