"""The writer (used by `arena markets record`) and the loader agree, and writes are atomic."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from markets.placement import PlacementRefused
from markets.replay import DatasetError, DatasetInfo, load_dataset, rehash_dataset, write_dataset
from markets.types import Market, PriceSnapshot, Resolution, ResolutionKind, Venue

T0 = datetime(2025, 3, 1, 12, 30, tzinfo=UTC)
INFO = DatasetInfo(
    name="recorded", version="2025-03", source="tests", license="CC0", created_with="pytest", description="x"
)

RAIN = Market(
    venue=Venue.POLYMARKET,
    venue_id="0xrain",
    question='Will it rain, "really", tomorrow?',
    description="Line one.\nLine two, with a comma.",
    open_time=T0 - timedelta(days=30),
    close_time=T0 + timedelta(days=30),
    category="weather",
    volume=Decimal("12345.67"),
    liquidity=Decimal("0.0000001"),
    url="https://polymarket.com/market/rain",
    token_ids={"YES": "111", "NO": "222"},
)
SNOW = Market(venue=Venue.MANIFOLD, venue_id="snow", question="Will it snow?")
RACE = Market(venue=Venue.MANIFOLD, venue_id="race", question="Who wins?", outcomes=("Ann", "Bo", "Cy"))
FOG = Market(venue=Venue.MANIFOLD, venue_id="fog", question="Fog?")
MARKETS = [RAIN, SNOW, RACE, FOG]


def _price(market: Market, minutes: int, prices: dict[str, str]) -> PriceSnapshot:
    values = {k: Decimal(v) for k, v in prices.items()}
    return PriceSnapshot(market.market_id, values, T0 + timedelta(minutes=minutes), source="live")


PRICES = [
    _price(RAIN, 0, {"YES": "0.535", "NO": "0.475"}),  # a real book: the sides need not sum to 1
    _price(RAIN, 60, {"YES": "0.6", "NO": "0.4"}),
    _price(SNOW, 5, {"YES": "0.25"}),
    _price(RACE, 10, {"Ann": "0.2", "Bo": "0.5", "Cy": "0.3"}),
    _price(FOG, 3, {"YES": "0.9", "NO": "0.1"}),
]
RESOLUTIONS = [
    Resolution.binary(RAIN.market_id, ResolutionKind.YES, T0 + timedelta(days=2)),
    Resolution.binary(SNOW.market_id, ResolutionKind.FIFTY_FIFTY, T0 + timedelta(days=3)),
    Resolution.winner(RACE.market_id, RACE.outcomes, "Bo", T0 + timedelta(days=4)),
    Resolution.binary(FOG.market_id, ResolutionKind.VOID, T0 + timedelta(days=5)),
]


def _write(out: Path, **changes: object) -> None:
    arguments: dict[str, object] = {
        "markets": MARKETS,
        "prices": PRICES,
        "resolutions": RESOLUTIONS,
        "info": INFO,
    }
    arguments.update(changes)
    write_dataset(out, **arguments)  # type: ignore[arg-type]


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    _write(tmp_path / "ds")
    dataset = load_dataset(tmp_path / "ds")
    assert dataset.info == INFO
    assert dict(dataset.markets) == {m.market_id: m for m in MARKETS}
    for original in RESOLUTIONS:
        loaded = dataset.resolutions[original.market_id]
        assert (loaded.kind, dict(loaded.payouts), loaded.resolved_at) == (
            original.kind,
            dict(original.payouts),
            original.resolved_at,
        )
        assert loaded.source == "replay:recorded"
    rain = dataset.series[RAIN.market_id].snapshots
    assert [dict(s.prices) for s in rain] == [dict(PRICES[0].prices), dict(PRICES[1].prices)]
    assert [s.observed_at for s in rain] == [PRICES[0].observed_at, PRICES[1].observed_at]
    assert dict(dataset.series[RACE.market_id].snapshots[0].prices) == dict(PRICES[3].prices)
    # A binary market recorded with YES only gets NO = 1 - YES, exactly.
    assert dict(dataset.series[SNOW.market_id].snapshots[0].prices) == {
        "YES": Decimal("0.25"),
        "NO": Decimal("0.75"),
    }
    assert dataset.time_column == "observed_at"


def test_writes_are_deterministic_and_hashed(tmp_path: Path) -> None:
    _write(tmp_path / "a")
    _write(tmp_path / "b", markets=list(reversed(MARKETS)), prices=list(reversed(PRICES)))
    for name in ("markets.csv", "prices.csv", "dataset.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert load_dataset(tmp_path / "a").content_hash.startswith("sha256:")
    assert ',"",' not in (tmp_path / "a" / "markets.csv").read_text()  # empty cells written bare
    assert "0.0000001" in (tmp_path / "a" / "markets.csv").read_text()  # never 1E-7


def test_bad_data_leaves_nothing_behind(tmp_path: Path) -> None:
    bad = [*PRICES, _price(SNOW, 9, {"YES": "1.5"})]
    with pytest.raises(
        DatasetError, match=r"prices\.csv row \d+, field 'price': '1\.5' is not a price in \[0, 1\]"
    ):
        _write(tmp_path / "ds", prices=bad)
    assert list(tmp_path.iterdir()) == []


def test_unknown_market_in_prices_is_refused(tmp_path: Path) -> None:
    stray = PriceSnapshot("manifold:ghost", {"YES": Decimal("0.5")}, T0, source="live")
    with pytest.raises(DatasetError, match="unknown market 'manifold:ghost'"):
        _write(tmp_path / "ds", prices=[*PRICES, stray])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("resolutions", "message"),
    [
        ([*RESOLUTIONS, RESOLUTIONS[0]], "two resolutions for market polymarket:0xrain"),
        (
            [Resolution.binary("manifold:ghost", ResolutionKind.NO, T0)],
            "resolution for unknown market manifold:ghost",
        ),
        (
            [Resolution(RAIN.market_id, ResolutionKind.YES, {"YES": Decimal("0.8"), "NO": Decimal(0)}, T0)],
            r"payouts .* cannot be stored as YES",
        ),
        ([Resolution(RACE.market_id, ResolutionKind.YES, {}, T0)], "YES needs a YES/NO market"),
    ],
)
def test_unstorable_resolutions_are_refused(
    tmp_path: Path, resolutions: list[Resolution], message: str
) -> None:
    with pytest.raises(DatasetError, match=message):
        _write(tmp_path / "ds", resolutions=resolutions)
    assert not (tmp_path / "ds").exists()


def test_existing_output_needs_overwrite_and_must_be_a_dataset(tmp_path: Path) -> None:
    _write(tmp_path / "ds")
    with pytest.raises(PlacementRefused, match="already exists; choose another path, or pass --force"):
        _write(tmp_path / "ds")
    _write(tmp_path / "ds", overwrite=True, markets=[SNOW], prices=[PRICES[2]], resolutions=[])
    assert list(load_dataset(tmp_path / "ds").markets) == [SNOW.market_id]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"]  # no staging or retired copies left

    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "notes.txt").write_text("keep me")
    with pytest.raises(PlacementRefused, match=r"refusing to replace .*home: it is not a replay dataset"):
        _write(precious, overwrite=True)
    assert (precious / "notes.txt").read_text() == "keep me"


def test_failed_overwrite_keeps_the_old_dataset(tmp_path: Path) -> None:
    _write(tmp_path / "ds")
    before = (tmp_path / "ds" / "prices.csv").read_bytes()
    with pytest.raises(DatasetError):
        _write(tmp_path / "ds", overwrite=True, prices=[_price(SNOW, 1, {"YES": "2"})])
    assert (tmp_path / "ds" / "prices.csv").read_bytes() == before
    load_dataset(tmp_path / "ds")


def test_rehash_accepts_a_deliberate_edit_but_still_validates(tmp_path: Path) -> None:
    _write(tmp_path / "ds")
    prices = tmp_path / "ds" / "prices.csv"
    prices.write_text(prices.read_text().replace("0.535", "0.55"))
    with pytest.raises(DatasetError, match="content_hash"):
        load_dataset(tmp_path / "ds")
    dataset = rehash_dataset(tmp_path / "ds")
    assert dataset.series[RAIN.market_id].snapshots[0].prices["YES"] == Decimal("0.55")

    prices.write_text(prices.read_text().replace("0.55", "5.5"))
    with pytest.raises(DatasetError, match=r"field 'price': '5\.5'"):
        rehash_dataset(tmp_path / "ds")
