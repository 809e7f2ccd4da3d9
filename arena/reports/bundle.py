"""``arena report``: write a cohort's report as a self-contained folder, and a zip of it.

The folder holds ``report.html`` (opens offline), ``report.md``, ``tables/`` (every table as
Parquet and CSV, no row limit), ``config.toml`` (the frozen config, which ``arena replay
--from-report`` relaunches) and ``manifest.json`` (provenance and a sha256 per file). It is
written in a hidden staging folder next to the target and renamed into place at the end, so a
crash or an error never leaves half a report behind.

Rebuilding the report of a finished cohort gives byte-identical tables: rows are sorted on
unique keys and both writers are deterministic. Only the creation time in the manifest and the
two readable reports differ (it comes from the injected clock).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from sqlalchemy import Engine

from arena.cohorts.export import CONFIG_FILE, config_toml
from arena.core.clock import Clock
from arena.reports import html, markdown
from arena.reports.content import ReportError, gather
from arena.reports.manifest import manifest, sha256_file
from arena.reports.redact import Redactor
from arena.reports.summary import summarize

CSV_TIME = "%Y-%m-%dT%H:%M:%S%.6fZ"
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
    """Write the report of ``cohort_id`` to ``out`` (and ``out.zip``); see the module docstring."""
    out = out.resolve()
    if out.exists() and not replace and (not out.is_dir() or any(out.iterdir())):
        raise ReportError(f"{out} already exists and is not empty; choose another --out or pass --force")
    content = gather(engine, cohort_id, prompts=prompts, redactor=Redactor.from_environ(environ))
    created_at = clock.now()
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.partial-{secrets.token_hex(4)}"
    try:
        staging.mkdir()
        files = [*_write_tables(staging / "tables", content.tables), _write_config(staging, content.cohort)]
        summary = summarize(content, created_at)
        listed = ["report.html", "report.md", *files, "manifest.json"]
        (staging / "report.md").write_text(markdown.render(summary, listed), encoding="utf-8")
        (staging / "report.html").write_text(html.render(summary, content, listed), encoding="utf-8")
        digests = {name: sha256_file(staging / name) for name in ("report.html", "report.md", *files)}
        document = manifest(content, digests, created_at=created_at, prompts=prompts)
        (staging / "manifest.json").write_text(
            json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        _move_into_place(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    archive = _zip(out) if make_zip else None
    return Report(out, archive, {name: len(frame) for name, frame in content.tables.items()})


def _write_tables(folder: Path, tables: Mapping[str, pl.DataFrame]) -> list[str]:
    """Each table as ``NAME.parquet`` and ``NAME.csv``; returns their paths relative to the bundle."""
    folder.mkdir()
    written: list[str] = []
    for name, frame in sorted(tables.items()):
        frame.write_parquet(folder / f"{name}.parquet", compression="zstd", statistics=True)
        frame.write_csv(folder / f"{name}.csv", datetime_format=CSV_TIME)
        written += [f"tables/{name}.csv", f"tables/{name}.parquet"]
    return written


def _write_config(folder: Path, cohort: Mapping[str, Any]) -> str:
    """``config.toml``: the cohort's frozen config (already redacted), which relaunches it."""
    header = [f"cohort {cohort['id']}: its frozen config", f"config sha256 {cohort['config_hash']}"]
    text = config_toml(cohort["config_json"], header=header)
    (folder / CONFIG_FILE).write_text(text, encoding="utf-8")
    return CONFIG_FILE


def _move_into_place(staging: Path, out: Path) -> None:
    """Rename the finished staging folder to ``out``, replacing an old report only at the very end."""
    if out.exists():
        old = out.parent / f".{out.name}.old-{secrets.token_hex(4)}"
        os.replace(out, old)
        os.replace(staging, out)
        shutil.rmtree(old)
    else:
        os.replace(staging, out)


def _zip(folder: Path) -> Path:
    """``folder.zip`` next to it, entries under ``folder.name/``, sorted, with fixed times."""
    target = folder.with_name(f"{folder.name}.zip")
    partial = folder.with_name(f".{folder.name}.zip.partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            entry = zipfile.ZipInfo(f"{folder.name}/{path.relative_to(folder).as_posix()}", ZIP_TIME)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = 0o644 << 16
            with path.open("rb") as source, archive.open(entry, "w") as sink:
                shutil.copyfileobj(source, sink, 1 << 20)
    os.replace(partial, target)
    return target
