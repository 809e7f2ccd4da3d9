"""Process-wide settings read from the environment (``ARENA_*``), with safe defaults.

``ARENA_HOME`` (default ``.arena`` in the current directory) holds local state; the default
database is the SQLite file ``$ARENA_HOME/arena.db``. ``ARENA_DATABASE_URL`` overrides it, e.g.
``postgresql://user:pass@host/arena``. The URL may carry a password, so it is a ``SecretStr``:
dumps and reprs of ``Settings`` show it masked; ``db_url`` gives the real value to the engine.

The ``*_every`` cadences and ``misfire_grace`` belong to the process running ``arena serve``, not
to a cohort (per-cohort rules such as ``marks.every`` live in the cohort config). Durations are
written like the cohort config's: ``15m``, ``1h``, ``90s``.
"""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from arena.core.config_types import Duration
from markets.endpoints import CLOB_URL, GAMMA_URL, MANIFOLD_URL


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore", frozen=True)

    home: Path = Path(".arena")
    database_url: SecretStr | None = None
    # Live venues' base URLs (the scheduler's sync job); point them at a mirror or a local fake.
    gamma_url: str = GAMMA_URL
    clob_url: str = CLOB_URL
    manifold_url: str = MANIFOLD_URL
    # ``arena serve``: how often each job looks for work. The marks job only checks which cohorts
    # are due (each marks on its own ``marks.every``), so it polls often.
    sync_every: Duration = timedelta(minutes=15)
    rounds_every: Duration = timedelta(minutes=1)
    marks_every: Duration = timedelta(minutes=1)
    settle_every: Duration = timedelta(minutes=10)
    complete_every: Duration = timedelta(hours=1)
    # How late a job run may still start (the scheduler's misfire grace); later runs are skipped.
    misfire_grace: Duration = timedelta(hours=1)
    # The scheduler's leader lease: a standby takes over this long after the leader fell silent.
    leader_lease: Duration = timedelta(seconds=60)
    # Replays' own writes on PostgreSQL wait for the disk at each commit (``on``, the default); ``off``
    # skips the wait (a server crash may lose the last commits, which a resumed replay redoes).
    # Live cohorts always commit durably. See docs/storage.md "Commit durability of replays".
    replay_synchronous_commit: bool = True
    # How a PostgreSQL write unit talks to the server (docs/storage.md "Pipelined writes"): ``on``
    # sends its writes in one psycopg pipeline and waits once; ``off`` sends each statement and
    # waits for it. The same statements, in the same order, either way.
    pg_pipeline: bool = True
    # What a venue may send (docs/limits-and-safety.md "Limits"): the decoded body of one response,
    # the whole of one request (connect to last byte), the network part of one sync run, and how
    # much of one raw payload is stored (past it, its size and sha256 instead).
    venue_max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=64 * 1024, le=1024**3)
    venue_request_deadline: Duration = timedelta(seconds=60)
    sync_deadline: Duration = timedelta(minutes=30)
    venue_raw_kept_bytes: int = Field(default=1024 * 1024, ge=1024, le=1024**3)
    # ``arena serve``'s market sync keeps of each venue what ``arena markets sync`` would with these
    # options (``--top-n``, ``--max-days-to-close``...). Bounded: a typo cannot ask for a million.
    sync_top_n: int = Field(default=500, ge=1, le=10_000)
    sync_max_days_to_close: float = Field(default=180, ge=0, le=3650)  # 0: no limit
    sync_min_liquidity: Decimal | None = Field(default=None, ge=0)  # None: the venue's default
    sync_min_price: Decimal = Field(default=Decimal("0.02"), ge=0, le=1)
    sync_max_price: Decimal = Field(default=Decimal("0.98"), ge=0, le=1)
    sync_books: bool = True
    sync_history_days: int = Field(default=7, ge=0, le=365)
    sync_discovery: Literal["markets", "events"] = "markets"

    @field_validator("home")
    @classmethod
    def _absolute_home(cls, home: Path) -> Path:
        """Pin a relative home to the directory the process started in, whatever it does later."""
        return home.expanduser().resolve()

    @field_validator("database_url")
    @classmethod
    def _non_empty_url(cls, url: SecretStr | None) -> SecretStr | None:
        if url is not None and not url.get_secret_value().strip():
            raise ValueError("ARENA_DATABASE_URL is empty; unset it for the SQLite default or give a URL")
        return url

    @model_validator(mode="after")
    def _price_band(self) -> Settings:
        if self.sync_min_price >= self.sync_max_price:
            raise ValueError(
                f"ARENA_SYNC_MIN_PRICE ({self.sync_min_price}) must be below ARENA_SYNC_MAX_PRICE "
                f"({self.sync_max_price})"
            )
        return self

    def sync_selection(self) -> dict[str, Any]:
        """The sync settings as plain JSON values (decimals as strings), as ``arena serve`` records them."""
        return {
            "top_n": self.sync_top_n,
            "max_days_to_close": self.sync_max_days_to_close or None,
            "min_liquidity": None if self.sync_min_liquidity is None else str(self.sync_min_liquidity),
            "min_price": str(self.sync_min_price),
            "max_price": str(self.sync_max_price),
            "books": self.sync_books,
            "history_days": self.sync_history_days,
            "discovery": self.sync_discovery,
        }

    @property
    def db_url(self) -> str:
        """The database URL to connect to: ``ARENA_DATABASE_URL``, else SQLite under ``home``."""
        if self.database_url is not None:
            return self.database_url.get_secret_value().strip()
        return f"sqlite:///{self.home / 'arena.db'}"
