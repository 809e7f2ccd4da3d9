"""The market source a cohort reads from: its replay dataset, or the live markets the sync stored."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from arena.cohorts.config import DEFAULT_DATASET, CohortConfig, ConfigError
from markets.replay import BUNDLED_DATASET_DIR, DatasetError, ReplaySource
from markets.types import MarketSource


def dataset_path(dataset: str) -> Path:
    """The bundled dataset for the default name; any other path as given (relative to the
    current directory), so the frozen config names exactly the folder that was used."""
    return BUNDLED_DATASET_DIR if dataset == DEFAULT_DATASET else Path(dataset).expanduser()


def open_source(config: CohortConfig, engine: Engine) -> MarketSource:
    """A replay cohort's dataset (validated on load) or the live database-backed source, each
    leaving out markets whose latest price is older than the cohort's ``[prices]`` allow."""
    if config.mode == "replay":
        assert config.dataset is not None
        try:
            return ReplaySource.from_directory(
                dataset_path(config.dataset), max_price_age=config.prices.snapshot_max_age_replay
            )
        except (DatasetError, FileNotFoundError) as exc:
            raise ConfigError(f"dataset: {exc}") from None
    assert config.venue is not None
    # Imported for a live cohort only: it brings the venues' parsers and httpx, which a replay never uses.
    from arena.db.market_source import DbMarketSource

    return DbMarketSource(engine, venues=(config.venue,), max_price_age=config.prices.snapshot_max_age_live)
