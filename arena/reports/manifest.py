"""``manifest.json``: what a report is, what made it, and a checksum of every file in it.

Modelled on inspect_ai's ``EvalLog`` header: a format version, the frozen cohort config with
its hash, the code (package version, git commit and dirty flag), the data (replay dataset name
and content hash), the models and prompt templates, how scores were computed, and the sha256
of each file, so a reader can tell exactly which cohort, code and data a number came from and
that nothing was edited since. Keys are only added; a removal or a change of meaning bumps
``REPORT_FORMAT_VERSION``.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from agents.llm.settings import TEMPLATES_DIR
from arena.core.provenance import PACKAGE, git_revision, package_version
from arena.engine.runtime.sources import dataset_path
from arena.reports.content import ReportContent
from markets.replay import DatasetError
from markets.replay.format import content_hash, read_info

REPORT_FORMAT_VERSION = 1


def manifest(
    content: ReportContent, files: dict[str, str], *, created_at: datetime, prompts: bool
) -> dict[str, Any]:
    """The manifest document; ``files`` maps each relative path of the bundle to its sha256."""
    cohort, agents = content.cohort, content.tables["agents"]
    config = cohort["config_json"]
    return {
        "report_format_version": REPORT_FORMAT_VERSION,
        "created_at": _utc(created_at),
        "generator": {"package": PACKAGE, "version": package_version(), "git": git_revision()},
        "cohort": {
            "id": cohort["id"],
            "name": cohort["name"],
            "mode": cohort["mode"],
            "status": cohort["status"],
            "seed": cohort["seed"],
            "created_at": _utc(cohort["created_at"]),
            "started_at": _utc(cohort["started_at"]),
            "finished_at": _utc(cohort["finished_at"]),
            "launched_with": {"version": cohort["arena_version"], "git_commit": cohort["git_commit"]},
            "config_hash": cohort["config_hash"],
            "config_hash_verified": cohort["config_hash_verified"],
            "config": config,
            "config_note": "secrets are shown as [REDACTED]; config_hash is of the stored original",
            "excluded_markets": cohort["excluded_markets"],
        },
        "dataset": dataset(config) if cohort["mode"] == "replay" else None,
        "agents": agents.select("agent", "kind", "model_id", "baseline").to_dicts(),
        "models": {a: m for a, m in agents.select("agent", "model_id").iter_rows() if m},
        "prompt_templates": prompt_templates(content.tables["decisions"], agents),
        "scoring": content.scoring,
        "options": {"prompts": prompts},
        "tables": {
            name: {"rows": len(frame), "columns": frame.columns} for name, frame in content.tables.items()
        },
        "files": dict(sorted(files.items())),
    }


MANIFEST = "manifest.json"
MANIFEST_LIMIT = 64 << 20  # bytes: a manifest larger than this was not written by the arena


def report_files(folder: Path) -> frozenset[str] | None:
    """The files of the report at ``folder`` by its own manifest (``manifest.json`` included);
    None when ``folder`` holds no manifest written by the arena."""
    path = folder / MANIFEST
    try:
        if path.is_symlink() or path.stat().st_size > MANIFEST_LIMIT:
            return None
        return _listed(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return None


def is_report_zip(path: Path) -> bool:
    """``path`` is the zip ``arena report`` makes of a report folder named like it (``DIR.zip``
    holds ``DIR/manifest.json``, and nothing its manifest does not list)."""
    prefix = f"{path.name.removesuffix('.zip')}/"
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
            if archive.getinfo(prefix + MANIFEST).file_size > MANIFEST_LIMIT:
                return False
            listed = _listed(json.loads(archive.read(prefix + MANIFEST).decode("utf-8")))
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return False
    return listed is not None and names <= {prefix + name for name in listed}


def _listed(document: object) -> frozenset[str] | None:
    """The files a report manifest lists, itself included; None when it is not one the arena wrote."""
    if not isinstance(document, dict) or not isinstance(document.get("report_format_version"), int):
        return None
    generator, files = document.get("generator"), document.get("files")
    if not isinstance(generator, dict) or generator.get("package") != PACKAGE or not isinstance(files, dict):
        return None
    return frozenset(files) | {MANIFEST}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def dataset(config: dict[str, Any]) -> dict[str, Any]:
    """Name, version and content hash of the replayed dataset, and whether its files still match."""
    declared = str(config.get("dataset"))
    folder = dataset_path(declared)
    try:
        info, recorded = read_info(folder, folder)
        current = content_hash(folder)
    except (OSError, DatasetError) as exc:
        return {
            "path": declared,
            "name": None,
            "content_hash": None,
            "note": f"dataset not readable here: {exc}",
        }
    return {
        "path": declared,
        "name": info.name,
        "version": info.version,
        "license": info.license,
        "content_hash": recorded,
        "files_match_hash": current == recorded,
    }


def prompt_templates(decisions: pl.DataFrame, agents: pl.DataFrame) -> dict[str, dict[str, str | None]]:
    """sha256 of each prompt template file of every prompt version the cohort's agents used."""
    versions = set(decisions["prompt_version"].drop_nulls().to_list())
    for settings in agents.filter(pl.col("kind") == "llm")["settings_json"].to_list():
        versions |= set(_prompt_versions(settings))
    return {version: _template_hashes(version) for version in sorted(versions)}


def _prompt_versions(settings_json: str | None) -> Iterable[str]:
    value = json.loads(settings_json or "{}").get("prompt_version")
    return [value] if isinstance(value, str) else []


def _template_hashes(version: str) -> dict[str, str | None]:
    folder = TEMPLATES_DIR / version
    return {
        name: sha256_file(folder / name) if (folder / name).is_file() else None
        for name in ("system.txt", "user.txt")
    }


def _utc(when: datetime | None) -> str | None:
    return None if when is None else when.isoformat().replace("+00:00", "Z")
