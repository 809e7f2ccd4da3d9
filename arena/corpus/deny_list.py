"""Restricted sources: documents from forecasting and prediction-market sites are left out.

Those sites hold crowd forecasts, prices and comments on the very questions being forecast
(near ground truth, in the Autocast rules' words, seed 001), so a document whose ``url`` host or
``source`` is one of them never enters a corpus. The default list is ``DEFAULT_DENY_LIST``;
``arena corpus import --deny-list FILE`` replaces it and ``--deny HOST`` adds to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_DENY_LIST = (
    # prediction markets and betting exchanges
    "polymarket.com",
    "manifold.markets",
    "kalshi.com",
    "predictit.org",
    "insightprediction.com",
    "augur.net",
    "smarkets.com",
    "betfair.com",
    "futuur.com",
    "electionbettingodds.com",
    # forecasting platforms and aggregators of forecasts
    "metaculus.com",
    "gjopen.com",
    "goodjudgment.com",
    "goodjudgment.io",
    "hypermind.com",
    "cset-foretell.com",
    "infer-pub.com",
    "randforecastinginitiative.org",
    "predictionbook.com",
    "metaforecast.org",
    "forecastbench.org",
)
_NAME_CHARS = re.compile(r"[^0-9a-z]")
_HOST = re.compile(r"^[0-9a-z-]+(\.[0-9a-z-]+)+$")


@dataclass(frozen=True)
class DenyList:
    """Denied domains: a host matches its domain and every subdomain (``www.metaculus.com``); a
    ``source`` also matches by the domain's name (``Metaculus``, ``Good Judgment``)."""

    domains: tuple[str, ...] = DEFAULT_DENY_LIST

    @classmethod
    def of(cls, entries: Iterable[str]) -> DenyList:
        """A list from domains as people write them (any case, ``www.``, a scheme or a path)."""
        domains: list[str] = []
        for entry in entries:
            host = _host(entry.strip())
            if not host or not _HOST.match(host):
                raise ValueError(f"deny-list entry {entry!r} is not a domain such as metaculus.com")
            domains.append(host)
        return cls(tuple(dict.fromkeys(domains)))

    @classmethod
    def read(cls, path: Path) -> DenyList:
        """One domain per line; blank lines and ``#`` comments are skipped."""
        lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
        try:
            return cls.of(line for line in lines if line)
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from exc

    def extended(self, entries: Iterable[str]) -> DenyList:
        return DenyList.of((*self.domains, *entries))

    def match(self, url: str | None, source: str | None) -> str | None:
        """The denied domain ``url`` or ``source`` belongs to, or None if neither is denied."""
        for value in (url, source):
            host = _host(value) if value else None
            if not host:
                continue
            for domain in self.domains:
                if host == domain or host.endswith("." + domain):
                    return domain
        if source:
            name = _NAME_CHARS.sub("", source.lower())
            for domain in self.domains:
                if name == _NAME_CHARS.sub("", domain.split(".")[0]):
                    return domain
        return None


def _host(value: str) -> str | None:
    """The lower-case host of a URL or of a bare ``host/path``, without ``www.``."""
    text = value.strip().lower()
    try:
        host = urlsplit(text if "//" in text else f"//{text}").hostname
    except ValueError:  # e.g. an unbalanced "[": not a URL, so no host
        return None
    return host.removeprefix("www.") if host else None
