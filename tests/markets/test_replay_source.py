"""ReplaySource timing: what is visible when, on a tiny dataset and on the bundled one."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from markets.replay import BUNDLED_DATASET_DIR, DatasetInfo, ReplayDataset, ReplaySource, load_dataset
from markets.replay.format import write_info
from markets.types import NO, YES, ResolutionKind

MARKETS = """venue,venue_id,question,outcomes,resolution,resolved_at
polymarket,0xa,A?,"[""YES"",""NO""]",YES,2025-01-10T00:00:00+00:00
manifold,b,B?,"[""YES"",""NO""]",NO,2025-01-06T00:00:00+00:00
manifold,c,C?,"[""YES"",""NO""]",,
"""
PRICES = """market_id,date,price
polymarket:0xa,2025-01-01,0.40
polymarket:0xa,2025-01-02,0.45
polymarket:0xa,2025-01-05,0.5
manifold:b,2025-01-03,0.2
manifold:c,2024-12-20,0.7
manifold:c,2025-01-20,0.6
"""
A, B, C = "polymarket:0xa", "manifold:b", "manifold:c"


def at(day: int, hour: int = 0, minute: int = 0, second: int = 0, micro: int = 0, month: int = 1) -> datetime:
    return datetime(2025, month, day, hour, minute, second, micro, tzinfo=UTC)


@pytest.fixture
def tiny(tmp_path: Path) -> ReplayDataset:
    (tmp_path / "markets.csv").write_text(MARKETS)
    (tmp_path / "prices.csv").write_text(PRICES)
    write_info(
        tmp_path, DatasetInfo(name="tiny", version="1", source="tests", license="CC0", created_with="t")
    )
    return load_dataset(tmp_path)


@pytest.fixture(scope="module")
def bundled() -> ReplaySource:
    return ReplaySource.from_directory(BUNDLED_DATASET_DIR)


def test_value_dated_d_is_usable_from_d_plus_one_midnight(tiny: ReplayDataset) -> None:
    source = ReplaySource(tiny)
    assert source.latest_prices([A], at(1, 23, 59, 59, 999_999)) == {}
    first = source.latest_prices([A], at(2))[A]
    assert first.prices == {YES: Decimal("0.40"), NO: Decimal("0.60")}
    assert first.observed_at == at(2)
    assert source.latest_prices([A], at(2, 23, 59, 59, 999_999))[A].prices[YES] == Decimal("0.40")
    assert source.latest_prices([A], at(3))[A].prices[YES] == Decimal("0.45")
    # Gaps carry the last real price forward with its own (older) stamp.
    assert source.latest_prices([A], at(5, 12))[A].observed_at == at(3)


def test_market_is_open_from_first_usable_price_until_resolution(tiny: ReplayDataset) -> None:
    source = ReplaySource(tiny)

    def open_ids(when: datetime) -> list[str]:
        return [m.market_id for m in source.open_markets(when)]

    # C (unresolved, first usable 2024-12-21) is open throughout: unresolved markets stay open.
    assert open_ids(datetime(2024, 12, 20, 23, 59, tzinfo=UTC)) == []
    assert open_ids(at(1, 23, 59)) == [C]
    assert open_ids(at(2)) == [C, A]
    assert open_ids(at(4)) == [B, C, A]  # by market id
    assert open_ids(at(5, 23, 59, 59, 999_999)) == [B, C, A]
    assert open_ids(at(6)) == [C, A]  # B resolved at 2025-01-06 00:00: closed at that instant
    assert open_ids(at(9, 23, 59, 59, 999_999)) == [C, A]
    assert open_ids(at(10)) == [C]


CLOSING_MARKETS = """venue,venue_id,question,outcomes,resolution,resolved_at,close_time
polymarket,0xd,D?,"[""YES"",""NO""]",YES,2025-01-10T00:00:00+00:00,2025-01-05T12:00:00+00:00
polymarket,0xe,E?,"[""YES"",""NO""]",NO,2025-01-10T00:00:00+00:00,
"""
CLOSING_PRICES = """market_id,date,price
polymarket:0xd,2025-01-01,0.40
polymarket:0xd,2025-01-06,0.90
polymarket:0xe,2025-01-01,0.30
polymarket:0xe,2025-01-06,0.20
"""
D, E = "polymarket:0xd", "polymarket:0xe"


def test_a_market_stops_trading_at_its_close_but_keeps_its_prices(tmp_path: Path) -> None:
    (tmp_path / "markets.csv").write_text(CLOSING_MARKETS)
    (tmp_path / "prices.csv").write_text(CLOSING_PRICES)
    write_info(
        tmp_path, DatasetInfo(name="closing", version="1", source="t", license="CC0", created_with="t")
    )
    source = ReplaySource(load_dataset(tmp_path))

    def offered(when: datetime) -> tuple[list[str], list[str]]:
        return [m.market_id for m in source.open_markets(when)], [
            e.market.market_id for e in source.snapshot(when).entries
        ]

    # D closes 2025-01-05 12:00 and resolves on the 10th; E has no close time and trades until it resolves
    assert offered(at(5, 11, 59, 59, 999_999)) == ([D, E], [D, E])
    assert offered(at(5, 12)) == ([E], [E])  # closed at that very instant
    assert offered(at(7)) == ([E], [E])
    assert offered(at(9, 23, 59, 59, 999_999)) == ([E], [E])
    assert offered(at(10)) == ([], [])
    # a held position in D is still marked: its prices after the close stay readable (0.90 from the 7th)
    assert source.latest_prices([D], at(7))[D].prices[YES] == Decimal("0.90")
    assert [r.market_id for r in source.resolutions(at(10))] == [D, E]


def test_resolution_is_known_from_its_resolved_at(tiny: ReplayDataset) -> None:
    source = ReplaySource(tiny)
    assert source.resolutions(at(5, 23, 59, 59, 999_999)) == []
    assert [r.market_id for r in source.resolutions(at(6))] == [B]
    assert [r.market_id for r in source.resolutions(at(10))] == [B, A]
    resolved = source.resolutions(at(10))[1]
    assert resolved.kind is ResolutionKind.YES and resolved.payouts == {YES: 1, NO: 0}
    assert resolved.resolved_at == at(10)


def test_snapshot_prices_history_and_types(tiny: ReplayDataset) -> None:
    snapshot = ReplaySource(tiny).snapshot(at(8, 12))
    (entry,) = snapshot.entries
    assert entry.market.market_id == A
    assert entry.market.resolution_time is None  # when it resolved is not known while open
    assert entry.price.prices == {YES: Decimal("0.5"), NO: Decimal("0.5")}
    assert all(isinstance(v, Decimal) for v in entry.price.prices.values())
    assert entry.history == ((at(2), Decimal("0.40")), (at(3), Decimal("0.45")), (at(6), Decimal("0.5")))
    assert entry.price.source == "replay:tiny"
    short = ReplaySource(tiny, history_points=2).snapshot(at(8, 12)).entries[0]
    assert short.history == ((at(3), Decimal("0.45")), (at(6), Decimal("0.5")))


def test_stale_prices_are_left_out_of_snapshots_only(tiny: ReplayDataset) -> None:
    source = ReplaySource(tiny)  # default max_price_age: 7 days
    when = at(10)  # C's latest price is usable from 2024-12-21: 20 days old
    assert [m.market_id for m in source.open_markets(when)] == [C]
    assert source.snapshot(when).entries == ()
    assert C in source.latest_prices([C], when)
    assert [e.market.market_id for e in source.snapshot(datetime(2024, 12, 28, tzinfo=UTC)).entries] == [C]
    assert [e.market.market_id for e in ReplaySource(tiny, max_price_age=None).snapshot(when).entries] == [C]


def test_times_must_be_aware_and_are_normalised(tiny: ReplayDataset) -> None:
    source = ReplaySource(tiny)
    with pytest.raises(ValueError, match="no time zone"):
        source.snapshot(datetime(2025, 1, 4))
    plus_two = at(4).astimezone(timezone(timedelta(hours=2)))
    assert source.snapshot(plus_two).as_of == at(4)
    assert source.snapshot(plus_two).content_hash() == source.snapshot(at(4)).content_hash()


def test_start_and_end(tiny: ReplayDataset) -> None:
    source = ReplaySource(tiny)
    assert (source.start, source.end) == (datetime(2024, 12, 21, tzinfo=UTC), at(21))


def test_bundled_dataset_loads_and_matches_its_documented_figures(bundled: ReplaySource) -> None:
    dataset = bundled.dataset
    assert dataset.info.license == "CC BY-SA 4.0"
    assert len(dataset.markets) == 487
    venues = [m.venue.value for m in dataset.markets.values()]
    assert (venues.count("polymarket"), venues.count("manifold")) == (361, 126)
    kinds = [r.kind for r in dataset.resolutions.values()]
    assert (kinds.count(ResolutionKind.YES), kinds.count(ResolutionKind.NO)) == (119, 368)
    assert set(dataset.resolutions) == set(dataset.markets) == set(dataset.series)
    assert min(len(s.times) for s in dataset.series.values()) >= 10
    assert dataset.price_rows == 21_930
    assert (bundled.start, bundled.end) == (
        datetime(2024, 7, 29, tzinfo=UTC),
        datetime(2026, 8, 19, tzinfo=UTC),
    )
    for name in ("SOURCE.md", "LICENSE", "orig/LICENSE", "orig/README.md"):
        assert (BUNDLED_DATASET_DIR / name).is_file()
    assert "Further modified for Bettor Arena" in (BUNDLED_DATASET_DIR / "SOURCE.md").read_text()


def test_bundled_answers_match_a_brute_force_reading_of_the_rules(bundled: ReplaySource) -> None:
    """The indexed source agrees with a direct, slow application of the timing rules."""
    dataset = bundled.dataset
    assert bundled.start is not None and bundled.end is not None
    span = (bundled.end - bundled.start).total_seconds()
    rng = random.Random(20250101)
    for _ in range(60):
        as_of = bundled.start + timedelta(seconds=rng.uniform(-86_400, span + 86_400))
        expected_open = sorted(
            k
            for k, s in dataset.series.items()
            if s.times[0] <= as_of < dataset.resolutions[k].resolved_at
            and (dataset.markets[k].close_time is None or as_of < dataset.markets[k].close_time)
        )
        assert [m.market_id for m in bundled.open_markets(as_of)] == expected_open
        latest = bundled.latest_prices(list(dataset.series), as_of)
        for market_id, series in dataset.series.items():
            visible = [s for s in series.snapshots if s.observed_at <= as_of]
            assert latest.get(market_id) == (visible[-1] if visible else None)
        expected_resolved = {k for k, r in dataset.resolutions.items() if r.resolved_at <= as_of}
        assert {r.market_id for r in bundled.resolutions(as_of)} == expected_resolved


def test_history_answers_equal_the_series_read_whole_in_any_order_of_asks(bundled: ReplaySource) -> None:
    """``PriceSeries.history`` reuses the pairs of its last answer: forward, backward, overlapping
    and far-apart asks all equal the window read from the whole series."""
    rng = random.Random(15)
    for market_id in rng.sample(sorted(bundled.dataset.series), 20):
        series = bundled.dataset.series[market_id]
        first = bundled.dataset.markets[market_id].outcomes[0]
        whole = [(s.observed_at, s.prices[first]) for s in series.snapshots]
        for _ in range(30):
            index, points = rng.randrange(len(series)), rng.choice((1, 3, 30))
            assert series.history(index, points) == tuple(whole[max(0, index + 1 - points) : index + 1])
