"""Every loopback fake runs on its own (``python -m tests.fakes.<name>``): it prints its URL,
serves until Ctrl-C, and its admin API moves a price and resolves a market, which the next
``arena markets sync`` stores, as the live walkthrough of docs/live-operation.md does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from sqlmodel import Session, col, select
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from arena.db.models import MarketRow, MarketSnapshotRow, ResolutionRow

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def fake(name: str, *args: str) -> Iterator[str]:
    """``python -m tests.fakes.NAME`` in a process of its own; yields its URL; Ctrl-C stops it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", f"tests.fakes.{name}", *args]
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), url
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0


def _sync(db: str, *args: str) -> None:
    result = CliRunner().invoke(app, ["markets", "sync", "--history-days", "0", "--database-url", db, *args])
    assert result.exit_code == 0, result.output


def _prices(db: str, market_id: str, source: str) -> list[dict[str, str]]:
    with Session(make_engine(db)) as session:
        rows = session.exec(
            select(MarketSnapshotRow)
            .where(MarketSnapshotRow.market_id == market_id, MarketSnapshotRow.source == source)
            .order_by(col(MarketSnapshotRow.observed_at))
        ).all()
    return [r.prices_json for r in rows]


def _resolution(db: str, market_id: str) -> str | None:
    with Session(make_engine(db)) as session:
        row = session.exec(select(ResolutionRow).where(ResolutionRow.market_id == market_id)).first()
    return None if row is None else row.kind


def _first_stored(db: str) -> str:
    with Session(make_engine(db)) as session:
        return session.exec(select(MarketRow.id).order_by(col(MarketRow.id))).first() or ""


@pytest.mark.parametrize(
    ("name", "venue", "source", "moved", "expected"),
    [
        ("polymarket_server", "polymarket", "polymarket-clob-mid", "0.61", {"YES": "0.61", "NO": "0.39"}),
        ("manifold_server", "manifold", "manifold-prob", "0.61", {"YES": "0.61", "NO": "0.39"}),
    ],
)
def test_a_venue_fake_runs_alone_and_moves_and_resolves_on_command(
    tmp_path: Path, name: str, venue: str, source: str, moved: str, expected: dict[str, str]
) -> None:
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    with fake(name) as url:
        urls = ["--gamma-url", url, "--clob-url", url] if venue == "polymarket" else ["--manifold-url", url]
        sync = ["--venue", venue, "--max-days-to-close", "0", *urls]
        _sync(db, *sync)
        market = _first_stored(db)
        listed = httpx.get(f"{url}/_admin/markets").json()
        assert market in [m["arena_id"] for m in listed]
        answer = httpx.post(f"{url}/_admin/price", json={"market": market, "yes": moved})
        assert answer.status_code == 200, answer.text
        _sync(db, *sync)
        assert _prices(db, market, source)[-1] == expected
        bad = httpx.post(f"{url}/_admin/price", json={"market": market, "yes": "2"})
        assert bad.status_code == 400 and "between 0 and 1" in bad.json()["error"]
        assert (
            httpx.post(f"{url}/_admin/resolve", json={"market": market, "outcome": "YES"}).status_code == 200
        )
        _sync(db, *sync)
    assert _resolution(db, market) == "YES"


def test_the_provider_fake_runs_alone_and_answers_in_the_decision_format() -> None:
    with fake("openai_server") as url:
        prompt = 'Markets:\n{"id": "polymarket:0xabc", "question": "Will it?"}'
        body = {"model": "fake/model", "messages": [{"role": "user", "content": prompt}]}
        answer = httpx.post(f"{url}/chat/completions", json=body, timeout=10).json()
    content = answer["choices"][0]["message"]["content"]
    assert (
        '"market_id": "polymarket:0xabc"' in content
        and '"probabilities": {"polymarket:0xabc": 0.6}' in content
    )
