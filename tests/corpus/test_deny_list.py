"""Restricted sources: forecasting and prediction-market sites never enter a corpus, however their
host or name is spelled (the Autocast competition rules forbid them outright)."""

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


# Crafted to pass a list that matched hosts and names as written: every family the attack pass
# used (trailing dot, escapes, userinfo, a backslash, full-width and invisible characters, IDNA,
# company names), 22 of which the old list let through.
CRAFTED = [
    ("https://polymarket.com./x", None, "polymarket.com"),
    ("https://polymarket%2Ecom/x", None, "polymarket.com"),
    ("https://polymarket.com\\@reuters.com/x", None, "polymarket.com"),
    ("https://ｐｏｌｙｍａｒｋｅｔ.com/x", None, "polymarket.com"),
    ("user@metaculus.com.", None, "metaculus.com"),
    (None, "polymarket.com.", "polymarket.com"),
    (None, "Manifold Markets", "manifold.markets"),
    (None, "Metaculus Inc.", "metaculus.com"),
    (None, "Good Judgment Open", "gjopen.com"),
    (None, "Kalshi Inc", "kalshi.com"),
    ("https://POLYMARKET.COM%2E/x", None, "polymarket.com"),
    ("https://metaculus.com%40reuters.com/x", None, "metaculus.com"),
    ("https://polymarket\u3002com/x", None, "polymarket.com"),  # an ideographic full stop
    ("https://poly\u00admarket.com/x", None, "polymarket.com"),  # a soft hyphen
    ("HTTPS://Manifold.Markets./m", None, "manifold.markets"),
    ("https://polymarket%252Ecom/x", None, "polymarket.com"),  # an escaped escape
    ("https://ｍｅｔａｃｕｌｕｓ．ｃｏｍ/questions", None, "metaculus.com"),
    ("https://poly\u200bmarket.com/x", None, "polymarket.com"),  # a zero-width space
    (None, "Metaculus, Inc.", "metaculus.com"),
    (None, "ＫＡＬＳＨＩ", "kalshi.com"),
    ("https://xn--polymrket-un64c.com/x", None, "polymarket.com"),  # IDNA of a full-width "a"
    ("https://reuters.com%2F@polymarket.com/x", None, "polymarket.com"),
    ("https://polymarket.com@reuters.com/x", None, "polymarket.com"),  # a denied user-info
]
LEGITIMATE = [
    ("https://www.reuters.com/markets/polymarket-bets", "Reuters"),
    ("https://apnews.com/article/kalshi-court-ruling", "Associated Press"),
    ("https://en.wikipedia.org/wiki/Metaculus", "Wikipedia"),
    ("https://www.bloomberg.com/news/articles/manifold", "Bloomberg L.P."),
    ("https://www.ft.com/content/prediction-markets", "Financial Times"),
    ("https://notpolymarket.com/a", None),
    ("https://polymarket.com.example.org/a", None),
    (None, "The Polymarket Review"),
    (None, "Good Judgement Newsletter"),
]


@pytest.mark.parametrize(("url", "source", "domain"), CRAFTED)
def test_a_crafted_spelling_of_a_restricted_source_is_dropped(
    url: str | None, source: str | None, domain: str
) -> None:
    denial = DenyList().denial(url, source)
    assert denial is not None and denial.domain == domain
    assert str(denial) == f"{domain} (by its {'url' if url else 'source'})"


def test_there_are_23_crafted_cases() -> None:
    assert len(CRAFTED) == 23 and len({(u, s) for u, s, _ in CRAFTED}) == 23


@pytest.mark.parametrize(("url", "source"), LEGITIMATE)
def test_legitimate_sources_still_pass(url: str | None, source: str | None) -> None:
    assert DenyList().denial(url, source) is None


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
