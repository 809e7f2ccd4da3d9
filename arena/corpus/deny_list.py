"""Restricted sources: documents from forecasting and prediction-market sites are left out.

Those sites hold crowd forecasts, prices and comments on the very questions being forecast, and
the Autocast competition rules forbid them outright as sources ("Forecasting sites and similar
(Metaculus, GoodJudgment, CSET, Hypermind, PredictIt, etc.)"), so a document whose ``url`` or
``source`` names one of them never enters a corpus. The default list is ``DEFAULT_DENY_LIST``;
``arena corpus import --deny-list FILE`` replaces it and ``--deny HOST`` adds to it.

A host is normalised before it is matched, the way a browser would read it: Unicode folded
(NFKC, so full-width ``ｐｏｌｙｍａｒｋｅｔ.com`` is ``polymarket.com``; invisible characters
dropped; the ideographic full stops read as dots; ``xn--`` labels decoded), percent-escapes
decoded, a backslash read as a slash (``polymarket.com\\@reuters.com`` is polymarket.com), a
trailing dot and a port dropped, case ignored. The user-info part of a URL is checked as a
host too: ``https://polymarket.com@reuters.com/`` names polymarket.com, whichever host a
client would go to. A ``source`` is read as a host, for the domains written in it, and as a
name: the organisation a listed domain belongs to (``ORGANISATIONS``), after company suffixes
(``Inc.``, ``LLC``...), so ``Metaculus Inc.``, ``Manifold Markets`` and ``Good Judgment Open``
are matched while ``The Polymarket Review`` is not.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

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
# The names the organisations behind listed domains go by; a domain not named here is known by
# its first label (``example-forecasts.org``: ``Example Forecasts``, ``ExampleForecasts``).
ORGANISATIONS = {
    "manifold.markets": ("Manifold Markets",),
    "insightprediction.com": ("Insight Prediction",),
    "electionbettingodds.com": ("Election Betting Odds",),
    "gjopen.com": ("Good Judgment Open", "GJ Open"),
    "goodjudgment.com": ("Good Judgment", "Good Judgment Inc"),
    "goodjudgment.io": ("Good Judgment",),
    "cset-foretell.com": ("CSET Foretell", "Foretell"),
    "infer-pub.com": ("INFER", "INFER Public"),
    "randforecastinginitiative.org": ("RAND Forecasting Initiative",),
}
# Words a company name may end with that do not change which organisation it is.
_COMPANY_SUFFIXES = frozenset(
    {"inc", "incorporated", "llc", "ltd", "limited", "corp", "corporation", "co", "company", "gmbh", "plc"}
)
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})  # what IDNA reads as a dot
_ESCAPE_ROUNDS = 3  # percent-decoding repeated, for escapes of escapes (%252E)
_HOST = re.compile(r"^[0-9a-z-]+(\.[0-9a-z-]+)+$")
_HOSTS_IN_TEXT = re.compile(r"[0-9a-z-]+(?:\.[0-9a-z-]+)+")
_PORT = re.compile(r":\d*$")
_WORDS = re.compile(r"[0-9a-z]+")


@dataclass(frozen=True, slots=True)
class Denial:
    """Why a document is left out: the listed ``domain`` it names, and where (``url`` or ``source``)."""

    domain: str
    by: str

    def __str__(self) -> str:
        return f"{self.domain} (by its {self.by})"


@dataclass(frozen=True)
class DenyList:
    """Denied domains: a host matches its domain and every subdomain (``www.metaculus.com``); a
    ``source`` also matches by the organisation's name (``Metaculus``, ``Good Judgment``).

    Checked once per imported document, so lookups are by set and dict, and the verdict on each
    distinct ``source`` (a dump has few) is remembered.
    """

    domains: tuple[str, ...] = DEFAULT_DENY_LIST
    _set: frozenset[str] = field(init=False, repr=False, compare=False)
    _names: dict[str, str] = field(init=False, repr=False, compare=False)
    _sources: dict[str, str | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names: dict[str, str] = {}
        for domain in reversed(self.domains):
            for name in (domain.split(".")[0], *ORGANISATIONS.get(domain, ())):
                names[_name_key(name)] = domain
        object.__setattr__(self, "_set", frozenset(self.domains))
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_sources", {})

    @classmethod
    def of(cls, entries: Iterable[str]) -> DenyList:
        """A list from domains as people write them (any case, ``www.``, a scheme or a path)."""
        domains: list[str] = []
        for entry in entries:
            found = hosts_of(entry.strip())
            host = found[0].removeprefix("www.") if found else None
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
        denial = self.denial(url, source)
        return None if denial is None else denial.domain

    def denial(self, url: str | None, source: str | None) -> Denial | None:
        """Why a document with this ``url`` and ``source`` is left out, or None if it is not."""
        if url:
            for host in hosts_of(url):
                if (domain := self._domain_of(host)) is not None:
                    return Denial(domain, "url")
        if source:
            if source not in self._sources:
                self._sources[source] = self._source_domain(source)
            if (domain := self._sources[source]) is not None:
                return Denial(domain, "source")
        return None

    def _source_domain(self, source: str) -> str | None:
        """The listed domain a ``source`` names: as a host, a domain written in it, or a name."""
        text = _folded(source)
        for host in (*hosts_of(source), *_HOSTS_IN_TEXT.findall(text)):
            if (domain := self._domain_of(host.strip("."))) is not None:
                return domain
        return self._names.get(_name_key(text))

    def _domain_of(self, host: str | None) -> str | None:
        """The listed domain ``host`` is or is under (``a.b.metaculus.com`` → ``metaculus.com``)."""
        labels = host.split(".") if host else []
        for start in range(len(labels) - 1):
            candidate = ".".join(labels[start:])
            if candidate in self._set:
                return candidate
        return None


def hosts_of(value: str) -> list[str]:
    """Every host a URL (or a bare ``host/path``) names, normalised as the module docstring says:
    its host, then any host-like part of its user-info. Read with its percent-escapes decoded
    first and last (``reuters.com%2F@polymarket.com`` splits differently), both readings kept."""
    if value.isascii() and not any(c in value for c in "%@\\"):  # nearly every URL: one plain reading
        return _authority_hosts(value.strip().lower())
    readings = dict.fromkeys((_folded(value), _folded(value, decode=False)))
    hosts = [host for text in readings for host in _authority_hosts(text)]
    return list(dict.fromkeys(hosts))


def _authority_hosts(text: str) -> list[str]:
    text = text.replace("\\", "/")  # as browsers read a backslash in a web URL
    try:
        netloc = urlsplit(text if "//" in text else f"//{text}").netloc
    except ValueError:  # e.g. an unbalanced "[": not a URL, so no host
        return []
    userinfo, _, hostport = netloc.rpartition("@")
    parts = [hostport, *re.split(r"[@:]", userinfo)] if userinfo else [hostport]
    hosts = [_PORT.sub("", _folded(part)).strip("[]").strip(".") for part in parts]
    return [_decoded_labels(host) if "xn--" in host else host for host in hosts if host]


def _folded(value: str, *, decode: bool = True) -> str:
    """``value`` percent-decoded (unless not ``decode``), Unicode-folded (NFKC, case), invisible
    characters dropped, and the ideographic full stops read as dots. Plain ASCII without escapes,
    nearly every URL, takes the short way."""
    text = value.strip()
    for _ in range(_ESCAPE_ROUNDS if decode and "%" in text else 0):
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold().translate(_DOTS)
    return "".join(c for c in text if unicodedata.category(c) != "Cf")


def _decoded_labels(host: str) -> str:
    """``host`` with its ``xn--`` labels decoded and folded (an undecodable label is kept)."""
    labels = []
    for label in host.split("."):
        if label.startswith("xn--"):
            with contextlib.suppress(UnicodeError, ValueError):  # not punycode: kept as written
                label = _folded(label[4:].encode("ascii").decode("punycode"))
        labels.append(label)
    return ".".join(labels)


def _name_key(name: str) -> str:
    """A name as compared: folded, its words joined, company suffixes at its end dropped."""
    words = _WORDS.findall(_folded(name))
    while len(words) > 1 and words[-1] in _COMPANY_SUFFIXES:
        words.pop()
    return "".join(words)
