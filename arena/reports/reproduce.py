"""Relaunching the cohort of a report bundle (``arena replay --from-report DIR``).

A bundle holds the frozen config (``config.toml``; ``manifest.json`` has it as JSON too) and,
in its manifest, the config's sha256 and the replayed dataset's content hash. The config is
taken only if it still hashes to the manifest's value (a hand edit, or a secret written as
``[REDACTED]``, would relaunch a different cohort), and a replay only if the dataset it names
holds, here, the data the report was made from: otherwise the same config would replay other
markets and prices, and the numbers would not be the report's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arena.cohorts.config import CohortConfig, ConfigError, load_config, parse_config
from arena.cohorts.export import CONFIG_FILE
from arena.engine.runtime.sources import dataset_path
from markets.replay import DatasetError
from markets.replay.format import content_hash

MANIFEST_FILE = "manifest.json"


def config_from_report(folder: Path) -> CohortConfig:
    """The config of the report in ``folder``, checked against its manifest and the dataset here;
    ``ConfigError`` (one line) when it cannot relaunch the same cohort."""
    cohort = _manifest(folder)
    toml = folder / CONFIG_FILE
    config = (
        load_config(toml)
        if toml.is_file()
        else parse_config(cohort["cohort"].get("config") or {}, source=f"{folder / MANIFEST_FILE} config")
    )
    recorded = cohort["cohort"].get("config_hash")
    if config.config_hash() != recorded:
        raise ConfigError(
            f"{toml if toml.is_file() else folder / MANIFEST_FILE}: the config hashes to "
            f"{config.config_hash()}, not the report's {recorded} (edited, or a secret was redacted): "
            "it would not relaunch the same cohort"
        )
    if config.mode == "replay":
        _same_dataset(folder, config, cohort.get("dataset") or {})
    return config


def _manifest(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{folder}: not a report folder (no {MANIFEST_FILE}); see `arena report`") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("cohort"), dict):
        raise ConfigError(f"{path}: not a report manifest (no 'cohort' object)")
    return document


def _same_dataset(folder: Path, config: CohortConfig, dataset: dict[str, Any]) -> None:
    recorded, name = dataset.get("content_hash"), str(config.dataset)  # a replay always names one
    if not recorded:
        raise ConfigError(
            f"{folder / MANIFEST_FILE}: the report records no content hash for dataset {name!r}, "
            "so the data it replayed cannot be checked"
        )
    path = dataset_path(name)
    try:
        here = content_hash(path)
    except (OSError, DatasetError) as exc:
        raise ConfigError(f"dataset {name!r} cannot be read here ({exc})") from None
    if here != recorded:
        raise ConfigError(
            f"dataset {name!r} holds {here} here, but the report replayed {recorded}: "
            "put the report's data at that path (or rerun on this data with `arena replay CONFIG`)"
        )
