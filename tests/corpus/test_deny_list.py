"""Restricted sources: forecasting and prediction-market sites never enter a corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.corpus.deny_list import DEFAULT_DENY_LIST, DenyList


@pytest.mark.parametrize(
    ("url", "source", "domain"),
    [
        ("https://polymarket.com/event/x", None, "polymarket.com"),
        ("https://WWW.Metaculus.com/questions/1/", None, "metaculus.com"),
        ("http://blog.kalshi.com/a", None, "kalshi.com"),
        ("manifold.markets/user/q", None, "manifold.markets"),
        (None, "www.gjopen.com", "gjopen.com"),
        (None, "https://goodjudgment.com/superforecasting", "goodjudgment.com"),
        (None, "Metaculus", "metaculus.com"),
        (None, "Insight Prediction", "insightprediction.com"),
        ("https://reuters.com/x", "PredictIt", "predictit.org"),
        ("https://x.goodjudgment.io/y", None, "goodjudgment.io"),  # two domains share one name
        (None, "Good Judgment", "goodjudgment.com"),
    ],
)
def test_the_default_list_denies_forecasting_sites_by_url_or_source(
    url: str | None, source: str | None, domain: str
) -> None:
    assert DenyList().match(url, source) == domain


@pytest.mark.parametrize(
    ("url", "source"),
    [
        ("https://www.reuters.com/markets/polymarket-bets", "Reuters"),
        ("https://notpolymarket.com/a", None),
        ("https://polymarket.com.example.org/a", None),
        (None, "The Polymarket Review"),
        (None, None),
        ("not a url [", "["),
    ],
)
def test_news_about_those_sites_is_kept(url: str | None, source: str | None) -> None:
    assert DenyList().match(url, source) is None


def test_a_deny_list_file_replaces_the_default_and_entries_add_to_it(tmp_path: Path) -> None:
    path = tmp_path / "deny.txt"
    path.write_text("# our list\nhttps://www.Example.org/\n\nexample.org  # twice\n", encoding="utf-8")
    custom = DenyList.read(path)
    assert custom.domains == ("example.org",)
    assert custom.match("https://polymarket.com/x", None) is None
    assert custom.extended(["news.test"]).match("https://a.news.test/", None) == "news.test"
    assert set(DEFAULT_DENY_LIST) >= {"polymarket.com", "manifold.markets", "metaculus.com", "kalshi.com"}


def test_an_entry_that_is_no_domain_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "deny.txt"
    path.write_text("metaculus\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"deny.txt: deny-list entry 'metaculus' is not a domain"):
        DenyList.read(path)
