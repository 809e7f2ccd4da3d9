"""Where an LLM agent's requests go, and the secrets its config may only name, never hold.

A cohort's settings are stored and shown (reports, dashboard, exports), so a credential never
sits in them: the API key comes from the variable named by ``api_key_env``, and so does any
other secret. ``extra_headers`` may spell out only harmless headers (``HARMLESS_HEADERS``,
such as OpenRouter's ``HTTP-Referer`` and ``X-Title``); any other header's value is a reference
``"env:NAME"``, read from the environment when the agent is built. The same holds for the query
parameters of ``base_url`` (``HARMLESS_QUERY``, such as Azure's ``api-version``, may be
literal). A ``base_url`` carrying ``user:password@`` is refused: it would be stored, and httpx
would send it as Basic auth in place of the key.

``display_headers`` and ``display_url`` give what may be shown of a stored config (old cohorts
may hold literal secrets from before these rules): references and harmless values as written,
every other value as ``[REDACTED]``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

ENV_PREFIX = "env:"
REDACTED = "[REDACTED]"
HARMLESS_HEADERS = frozenset(
    {
        "accept",
        "accept-language",
        "content-type",
        "user-agent",
        "http-referer",
        "referer",
        "x-title",
        "openai-organization",
        "openai-project",
        "anthropic-version",
        "anthropic-beta",
    }
)
HARMLESS_QUERY = frozenset({"api-version"})
# The key itself: it comes from api_key_env alone, so no header may stand in for it.
KEY_HEADERS = frozenset({"authorization", "proxy-authorization"})
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP field name (RFC 9110)


class EndpointError(ValueError):
    """A header, URL or reference that cannot be used; the message never repeats a value."""


def env_reference(value: str) -> str | None:
    """The variable a value ``"env:NAME"`` names, or None if it is not a reference."""
    if not value.startswith(ENV_PREFIX):
        return None
    name = value.removeprefix(ENV_PREFIX)
    return name if _ENV_NAME.fullmatch(name) else None


def check_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """``headers`` if each is harmless or names its value's variable; else EndpointError."""
    for name, value in headers.items():
        lowered = name.lower()
        if not _TOKEN.fullmatch(name) or "\r" in value or "\n" in value:
            raise EndpointError(f"{name!r} is not a valid header (its name, or a line break in its value)")
        if lowered in KEY_HEADERS:
            raise EndpointError(
                f"extra_headers must not carry credentials ({name}); the key comes from the variable "
                "named by api_key_env"
            )
        if lowered not in HARMLESS_HEADERS and env_reference(value) is None:
            raise EndpointError(
                f'the value of {name!r} must name an environment variable ("env:NAME"), '
                f"since the config is stored and shown; only {', '.join(sorted(HARMLESS_HEADERS))} "
                "may be written out"
            )
    return dict(headers)


def check_base_url(value: str) -> str:
    """``value`` without a trailing slash, if it is an http(s) URL holding no secret."""
    if not value.startswith(("http://", "https://")):
        raise EndpointError("base_url must start with http:// or https://")
    try:
        parts = urlsplit(value)
        _ = parts.port  # parses the port: a bad one fails here, not at the first request
    except ValueError as exc:
        raise EndpointError(f"base_url is not a valid URL ({exc})") from None
    if "@" in parts.netloc:
        raise EndpointError(
            "base_url must not carry credentials (user:password@): they would be stored with the "
            "cohort and sent in place of the key; the key comes from the variable named by api_key_env"
        )
    if parts.fragment:
        raise EndpointError("base_url must not have a #fragment")
    for name, param in parse_qsl(parts.query, keep_blank_values=True):
        if name.lower() not in HARMLESS_QUERY and env_reference(param) is None:
            raise EndpointError(
                f'the query parameter {name!r} must name an environment variable ("env:NAME"), '
                f"since the config is stored and shown; only {', '.join(sorted(HARMLESS_QUERY))} may be "
                "written out"
            )
    return urlunsplit(parts._replace(path=parts.path.rstrip("/")))


def references(headers: Mapping[str, str], base_url: str) -> list[str]:
    """The variables a config's headers and ``base_url`` name, in order."""
    values = [*headers.values(), *(v for _, v in parse_qsl(urlsplit(base_url).query, keep_blank_values=True))]
    return [name for value in values if (name := env_reference(value)) is not None]


@dataclass(frozen=True, slots=True)
class Endpoint:
    """An agent's request URL and headers with every reference resolved, and the secret values
    they now hold (to scrub from whatever comes back)."""

    url: str
    headers: dict[str, str]
    secrets: tuple[str, ...]

    @classmethod
    def resolve(
        cls, base_url: str, headers: Mapping[str, str], environ: Mapping[str, str], *, path: str
    ) -> Endpoint:
        """``base_url`` + ``path`` (the query kept after the path) and ``headers``, references read
        from ``environ``; a variable that is not set is an EndpointError naming it."""
        secrets: list[str] = []

        def value_of(text: str) -> str:
            name = env_reference(text)
            if name is None:
                return text
            found = environ.get(name)
            if not found:
                raise EndpointError(f'environment variable {name!r} (named by an "env:" value) is not set')
            secrets.append(found)
            return found

        parts = urlsplit(base_url)
        query = urlencode(
            [(k, value_of(v)) for k, v in parse_qsl(parts.query, keep_blank_values=True)], quote_via=quote
        )
        url = urlunsplit(parts._replace(path=parts.path.rstrip("/") + path, query=query))
        resolved = {name: value_of(value) for name, value in headers.items()}
        return cls(url, resolved, tuple(secrets))


def display_headers(headers: Mapping[str, object]) -> dict[str, object]:
    """What may be shown of stored ``extra_headers``: harmless values and references as written."""
    return {
        name: value
        if isinstance(value, str) and (name.lower() in HARMLESS_HEADERS or env_reference(value) is not None)
        else REDACTED
        for name, value in headers.items()
    }


def display_url(url: str) -> str:
    """What may be shown of a stored URL: no userinfo, only harmless or reference query values,
    and no trailing slash on the path (as ``check_base_url`` stores it)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc if "@" not in parts.netloc else f"{REDACTED}@{parts.netloc.rsplit('@', 1)[1]}"
    shown = [
        (k, v if k.lower() in HARMLESS_QUERY or env_reference(v) is not None else REDACTED)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    ]
    query = urlencode(shown, safe="[]:", quote_via=quote)
    return urlunsplit(parts._replace(netloc=netloc, path=parts.path.rstrip("/"), query=query, fragment=""))
