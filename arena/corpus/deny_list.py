"""Restricted sources: documents from forecasting and prediction-market sites are left out.

Those sites hold crowd forecasts, prices and comments on the very questions being forecast
(near ground truth, in the Autocast rules' words, seed 001), so a document whose ``url`` host or
``source`` is one of them never enters a corpus. The default list is ``DEFAULT_DENY_LIST``;
``arena corpus import --deny-list FILE`` replaces it and ``--deny HOST`` adds to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
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
    ``source`` also matches by the domain's name (``Metaculus``, ``Good Judgment``).

    Checked once per imported document, so lookups are by set and dict, and the verdict on each
    distinct ``source`` (a dump has few) is remembered.
    """

    domains: tuple[str, ...] = DEFAULT_DENY_LIST
    _set: frozenset[str] = field(init=False, repr=False, compare=False)
    _names: dict[str, str] = field(init=False, repr=False, compare=False)
    _sources: dict[str, str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = {_NAME_CHARS.sub("", d.split(".")[0]): d for d in reversed(self.domains)}
        object.__setattr__(self, "_set", frozenset(self.domains))
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_sources", {})

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
        denied = self._domain_of(_host(url)) if url else None
        if denied is None and source:
            if source not in self._sources:
                name = self._names.get(_NAME_CHARS.sub("", source.lower()))
                self._sources[source] = self._domain_of(_host(source)) or name
            denied = self._sources[source]
        return denied

    def _domain_of(self, host: str | None) -> str | None:
        """The listed domain ``host`` is or is under (``a.b.metaculus.com`` → ``metaculus.com``)."""
        labels = host.split(".") if host else []
        for start in range(len(labels) - 1):
            candidate = ".".join(labels[start:])
            if candidate in self._set:
                return candidate
        return None


def _host(value: str) -> str | None:
    """The lower-case host of a URL or of a bare ``host/path``, without ``www.``."""
    text = value.strip().lower()
    try:
        host = urlsplit(text if "//" in text else f"//{text}").hostname
    except ValueError:  # e.g. an unbalanced "[": not a URL, so no host
        return None
    return host.removeprefix("www.") if host else None
