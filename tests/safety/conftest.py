"""Fixtures of the hostile-text tests: a loopback tracker and a finished cohort full of hostile text.

A replay dataset whose market questions, descriptions, categories and links are hostile; a
cohort with a hostile name; a plug-in bot writing hostile reasoning, made-up market ids and
exception messages (``hostile_bot``). The cohort runs through the real ``arena replay`` and the
report through ``arena report``. Every hostile string names the tracker, which logs each request.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import CohortRow
from markets.replay import DatasetInfo, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue
from tests.safety.corpus import hostile, short

D0 = datetime(2025, 3, 1, tzinfo=UTC)


class Tracker:
    """A loopback HTTP server that records every request (method and path) and answers 204."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                hits.append(f"GET {self.path}")
                self.send_response(204)
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *args: Any) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)


@pytest.fixture(scope="module")
def tracker() -> Iterator[Tracker]:
    t = Tracker()
    t.thread.start()
    yield t
    t.server.shutdown()


def _dataset(directory: Path, tracker: str) -> Path:
    texts = [t for t in hostile(tracker) if "\x00" not in t]  # CSV cells cannot hold NUL
    markets, prices, resolutions = [], [], []
    for i, text in enumerate(texts[:6]):
        market = Market(
            venue=Venue.POLYMARKET,
            venue_id=f"m{i}",
            question=text[:500],
            description=texts[(i + 1) % len(texts)],
            category=texts[(i + 2) % len(texts)][:80],
            url=f"javascript:{text[:40]}" if i % 2 else f"{tracker}/venue-page",
            close_time=D0 + timedelta(days=40),
            volume=Decimal(1000 + i),
        )
        markets.append(market)
        prices += [
            PriceSnapshot(market.market_id, {"YES": p, "NO": 1 - p}, D0 + timedelta(days=d), "test")
            for d, p in ((0, Decimal("0.40")), (10, Decimal("0.55")), (20, Decimal("0.60")))
        ]
        kind = ResolutionKind.YES if i % 2 else ResolutionKind.NO
        resolutions.append(Resolution.binary(market.market_id, kind, D0 + timedelta(days=30), "test"))
    info = DatasetInfo(name="hostile", version="1", source="tests", license="CC0", created_with="tests")
    write_dataset(directory, markets=markets, prices=prices, resolutions=resolutions, info=info)
    return directory


def _arena(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output[-3000:]
    return result.output


@pytest.fixture(scope="module")
def cohort(tracker: Tracker, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, Path]:
    """(database URL, cohort id, report folder) of a finished replay full of hostile text."""
    root = tmp_path_factory.mktemp("hostile")
    dataset = _dataset(root / "data", tracker.url)
    config = root / "hostile.toml"
    name = short(tracker.url).replace("\\", "\\\\").replace('"', '\\"')
    config.write_text(
        f'name = "{name}"\ndataset = "{dataset}"\n[schedule]\nevery = "2d"\nrounds = 16\n'
        '[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
        '[[agents]]\nname = "hostile"\nkind = "plugin"\npath = "tests.safety.hostile_bot:HostileBettor"\n'
        f'settings = {{ tracker = "{tracker.url}" }}\n'
        '[[agents]]\nname = "hold"\nkind = "hold"\n',
        encoding="utf-8",
    )
    url = f"sqlite:///{root / 'arena.db'}"
    # The bot fails most rounds on purpose (made-up markets, exceptions): allow that, it is the point.
    _arena("replay", str(config), "--allow-agent-failures", "--database-url", url)
    with Session(make_engine(url)) as session:
        (cohort_id,) = session.exec(select(CohortRow.id)).all()
    out = root / "report"
    _arena("report", cohort_id, "--out", str(out), "--no-zip", "--database-url", url)
    return url, cohort_id, out
