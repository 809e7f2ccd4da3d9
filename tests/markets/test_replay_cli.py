"""`arena data info` and `arena data rehash`, run through the real typer app."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.commands.data import app
from markets.replay import BUNDLED_DATASET_DIR, DatasetInfo, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue

T0 = datetime(2025, 6, 1, tzinfo=UTC)
P1 = Market(venue=Venue.POLYMARKET, venue_id="p1", question="P1?")
P2 = Market(venue=Venue.POLYMARKET, venue_id="p2", question="P2?", category="politics")
M1 = Market(venue=Venue.MANIFOLD, venue_id="m1", question="M1?", category="politics")
M2 = Market(venue=Venue.MANIFOLD, venue_id="m2", question="M2?", category="sport")
RACE = Market(venue=Venue.MANIFOLD, venue_id="race", question="Who?", outcomes=("A", "B"))
DAYS = [(P1, [0, 1, 10]), (P2, [0, 2]), (M1, [0]), (M2, [0, 20]), (RACE, [0, 1, 2])]


def _prices() -> list[PriceSnapshot]:
    snapshots = []
    for market, days in DAYS:
        for day in days:
            prices = {o: Decimal(1) / len(market.outcomes) for o in market.outcomes}
            snapshots.append(PriceSnapshot(market.market_id, prices, T0 + timedelta(days=day), "t"))
    return snapshots


RESOLUTIONS = [
    Resolution.binary(P1.market_id, ResolutionKind.YES, T0 + timedelta(days=30)),
    Resolution.binary(P2.market_id, ResolutionKind.NO, T0 + timedelta(days=30)),
    Resolution.binary(M1.market_id, ResolutionKind.VOID, T0 + timedelta(days=5)),
    Resolution.winner(RACE.market_id, RACE.outcomes, "B", T0 + timedelta(days=40)),
]
INFO = DatasetInfo(name="mini", version="v1", source="tests", license="CC0", created_with="pytest")


@pytest.fixture
def mini(tmp_path: Path) -> Path:
    write_dataset(
        tmp_path / "mini", markets=[m for m, _ in DAYS], prices=_prices(), resolutions=RESOLUTIONS, info=INFO
    )
    return tmp_path / "mini"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    return result.exit_code, result.output


def row(output: str, *cells: str) -> bool:
    """True if a table line holds exactly these cells, in order (the CLI's tables rule only their
    header: cells are separated by spaces)."""
    pattern = r"^\s*" + r"\s+".join(re.escape(c) for c in cells) + r"\s*$"
    return re.search(pattern, output, re.MULTILINE) is not None


def test_info_summarises_the_dataset(mini: Path) -> None:
    code, output = invoke("info", str(mini))
    assert code == 0, output
    assert row(output, "venue", "markets", "YES", "NO", "VOID", "OUTCOME", "unresolved")
    assert row(output, "manifold", "3", "0", "0", "1", "1", "1")
    assert row(output, "polymarket", "2", "1", "1", "0", "0", "0")
    assert row(output, "total", "5", "1", "1", "1", "1", "1")
    assert row(output, "price observed_at", "2025-06-01 00:00 UTC … 2025-06-21 00:00 UTC")
    assert row(output, "resolved_at", "2025-06-06 00:00 UTC … 2025-07-11 00:00 UTC")
    assert row(output, "price rows", "22")  # recorded per outcome: 11 points x 2 outcomes
    assert row(output, "price points (market, time)", "11")
    assert row(output, "median points per market", "2")
    assert row(output, "gaps > 7 days", "2")
    assert row(output, "longest gap", "20 days (manifold:m2)")
    assert row(output, "politics", "2") and row(output, "sport", "1")
    assert row(output, "license", "CC0")
    assert row(
        output, "content_hash", f"sha256:{(mini / 'dataset.json').read_text().split('sha256:')[1][:64]}"
    )


def test_info_on_the_bundled_dataset() -> None:
    code, output = invoke("info", str(BUNDLED_DATASET_DIR))
    assert code == 0, output
    assert row(output, "venue", "markets", "YES", "NO", "VOID")  # void shown even when there is none
    assert row(output, "polymarket", "361", "75", "286", "0")
    assert row(output, "manifold", "126", "44", "82", "0")
    assert row(output, "price dates (daily close, used the next day)", "2024-07-28 … 2026-08-18")
    assert row(output, "license", "CC BY-SA 4.0")
    assert "categories: none recorded" in output


def test_info_on_something_that_is_not_a_dataset(tmp_path: Path) -> None:
    code, output = invoke("info", str(tmp_path))
    assert code == 2
    assert output.startswith(f"error: {tmp_path} is not a replay dataset: missing dataset.json")
    assert "arena data import-forecastbench" in output
    assert "Traceback" not in output


def test_broken_csv_names_the_row(mini: Path) -> None:
    markets = mini / "markets.csv"
    markets.write_text(markets.read_text().replace("P2?", "P2, unquoted?"))
    code, output = invoke("rehash", str(mini))
    assert code == 2
    assert output.startswith(
        f"error: {mini}/markets.csv row 5: 16 fields, expected 15 (one per header column)"
    )


def test_info_names_the_bad_row(mini: Path) -> None:
    prices = mini / "prices.csv"
    prices.write_text(prices.read_text().replace("0.5\n", "1.5\n", 1))
    code, output = invoke("rehash", str(mini))
    assert code == 2
    assert re.match(rf"error: {re.escape(str(mini))}/prices\.csv row \d+, field 'price': '1\.5'", output)


def test_rehash_after_a_deliberate_edit(mini: Path) -> None:
    markets = mini / "markets.csv"
    markets.write_text(markets.read_text().replace("P1?", "P1 reworded?"))
    code, output = invoke("info", str(mini))
    assert code == 2 and "content_hash" in output and "arena data rehash" in output
    code, output = invoke("rehash", str(mini))
    assert code == 0, output
    assert "valid; content_hash sha256:" in output
    assert invoke("info", str(mini))[0] == 0
