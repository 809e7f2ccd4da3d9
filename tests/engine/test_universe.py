"""Universe selection: filters never guess a missing field, ordering is stable, the cap applies."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from arena.cohorts.config import UniverseConfig
from arena.engine.rounds.universe import hide_prices, select_universe
from markets.types import Market, MarketSnapshot, PriceSnapshot, SnapshotEntry, Venue
from tests.engine.helpers import day

D = Decimal
NOW = day(10)


def _entry(
    venue_id: str,
    yes: str | None,
    *,
    venue: Venue = Venue.POLYMARKET,
    volume: int | None = 1000,
    close_in: int | None = 30,
) -> SnapshotEntry:
    market = Market(
        venue,
        venue_id,
        f"{venue_id}?",
        volume=None if volume is None else D(volume),
        close_time=None if close_in is None else NOW + timedelta(days=close_in),
    )
    prices = {} if yes is None else {"YES": D(yes), "NO": 1 - D(yes)}
    return SnapshotEntry(
        market, PriceSnapshot(market.market_id, prices, NOW, "t"), history=((NOW, D(yes or "0.5")),)
    )


def _ids(snapshot: MarketSnapshot) -> list[str]:
    return [e.market.market_id.split(":")[1] for e in snapshot.entries]


SNAPSHOT = MarketSnapshot(
    NOW,
    (
        _entry("mid", "0.50", volume=500),
        _entry("sure", "0.99"),
        _entry("unpriced", None),
        _entry("novolume", "0.40", volume=None),
        _entry("soon", "0.30", close_in=1),
        _entry("late", "0.60", close_in=400),
        _entry("noclose", "0.45", close_in=None),
        _entry("mani", "0.35", venue=Venue.MANIFOLD, volume=5000),
    ),
)


def test_price_band_drops_near_certain_and_unpriced_markets() -> None:
    got = _ids(select_universe(SNAPSHOT, UniverseConfig(order_by="market_id")))
    assert "sure" not in got and "unpriced" not in got and len(got) == 6


def test_filters_need_the_field_they_filter_on() -> None:
    cfg = UniverseConfig(min_volume=D(100), min_days_to_close=2, max_days_to_close=365, order_by="market_id")
    assert _ids(select_universe(SNAPSHOT, cfg)) == ["mani", "mid"]  # no volume / no close time: out


def test_venues_order_cap_and_exclusions() -> None:
    by_volume = select_universe(SNAPSHOT, UniverseConfig(max_markets=3))
    assert _ids(by_volume) == ["mani", "late", "noclose"]  # 5000, then the 1000s by id; unknown volume last
    only_poly = select_universe(
        SNAPSHOT, UniverseConfig(venues=(Venue.POLYMARKET,), order_by="close_time", max_markets=2)
    )
    assert _ids(only_poly) == ["soon", "mid"]
    assert "mani" not in _ids(select_universe(SNAPSHOT, UniverseConfig(), frozenset({"manifold:mani"})))


def test_hidden_prices_keep_the_markets_and_drop_every_price() -> None:
    hidden = hide_prices(select_universe(SNAPSHOT, UniverseConfig()))
    assert len(hidden.entries) == 6
    assert all(not e.price.prices and not e.price.bids and not e.history for e in hidden.entries)


def test_a_closed_market_is_never_offered_whatever_the_filters() -> None:
    snapshot = MarketSnapshot(
        NOW,
        (
            *SNAPSHOT.entries,
            _entry("closed", "0.50", close_in=-1),  # days to close −1: below any max_days_to_close
            _entry("atclose", "0.50", close_in=0),  # closes at the round's very instant
        ),
    )
    soonest = UniverseConfig(max_days_to_close=365, order_by="close_time", max_markets=3)
    assert _ids(select_universe(snapshot, soonest)) == ["soon", "mani", "mid"]  # then by id
    everything = _ids(select_universe(snapshot, UniverseConfig(order_by="market_id", max_markets=100)))
    assert "closed" not in everything and "atclose" not in everything
    assert "noclose" in everything  # no known close: offered until it resolves
