"""The dashboard's tables of actions and forecasts, on frames: markets named, links only when safe."""

from __future__ import annotations

import polars as pl

from dashboard import log_tables

MARKETS = pl.DataFrame(
    {
        "market_id": ["polymarket:a", "manifold:b"],
        "question": ["Will A happen?", "<script>alert(1)</script> B?"],
        "url": ["https://polymarket.com/event/a", "javascript:alert(1)"],
    }
)
HELD = pl.DataFrame(
    {"position_id": ["polymarket:a|YES|1"], "market_id": ["polymarket:a"], "outcome": ["YES"]}
)


def test_market_links_are_only_plain_web_addresses() -> None:
    names = log_tables.market_names(MARKETS)
    assert names["link"].to_list() == ["https://polymarket.com/event/a", None]
    assert names["question"].to_list() == MARKETS["question"].to_list()  # text kept as written


def test_actions_name_markets_sells_by_their_position_and_keep_made_up_ids() -> None:
    stored: list[dict[str, object]] = [
        {"type": "bet", "market_id": "manifold:b", "outcome": "NO", "amount": "12.5"},
        {"type": "sell", "position_id": "polymarket:a|YES|1", "percent": "100"},
        {"type": "bet", "market_id": "made-up <img src=x>", "outcome": "YES", "amount": "not a number"},
    ]
    view, config = log_tables.actions(stored, log_tables.market_names(MARKETS), HELD)
    assert view.rows() == [
        ("bet", "<script>alert(1)</script> B?", "NO", 12.5, None, None, "manifold:b"),
        ("sell", "Will A happen?", "YES", None, 100.0, "https://polymarket.com/event/a", "polymarket:a"),
        ("bet", None, "YES", None, None, None, "made-up <img src=x>"),
    ]
    assert config["Venue"]["type_config"]["type"] == "link"


def test_forecasts_name_their_markets() -> None:
    view, _ = log_tables.forecasts(
        {"polymarket:a": {"YES": 0.7}, "gone": 0.2}, log_tables.market_names(MARKETS)
    )
    assert view.rows() == [
        ("Will A happen?", "YES 0.7", "https://polymarket.com/event/a", "polymarket:a"),
        (None, "0.2", None, "gone"),
    ]
