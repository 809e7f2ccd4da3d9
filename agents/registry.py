"""The single place that maps an agent ``kind`` to its settings model and its Bettor.

Cohort configs name agents by kind and give free-form settings; everything about a kind —
which keys it takes, what it needs from the environment, how it is built — is decided here, so
a config can be checked completely before a cohort starts, and a typo is an error, not a default.
API keys are read from ``environ`` only when an LLM bettor is built and handed to it alone.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agents.baselines.favorite import FavoriteBettor, FractionSettings
from agents.baselines.momentum_kelly import KellySettings, MomentumKellyBettor
from agents.baselines.passive import HalfBettor, HoldBettor, MarketBettor, NoSettings
from agents.baselines.random_bets import RandomBettor, RandomSettings
from agents.crowd import CrowdBettor, CrowdSettings
from agents.external import EXTERNAL_KIND, NOT_RUN, ExternalSettings
from agents.plugins import (
    Factory,
    PluginError,
    call_arguments,
    instantiate,
    load_by_entry_point,
    load_by_path,
)
from agents.scripted import ScriptedBettor, ScriptedSettings, ScriptError, load_script
from agents.types import Bettor

if TYPE_CHECKING:  # the LLM bettors' modules import it when one is built: a run of baselines never does
    import httpx

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})

# Makes the HTTP client of one LLM agent. The caller (the arena) owns every client it makes and
# closes them when its run ends; a client per agent keeps httpcore's per-request pool work small.
NewHttpClient = Callable[[], "httpx.AsyncClient"]


class AgentConfigError(ValueError):
    """An agent's kind or settings cannot be used; the message names the key and what was expected."""


class PluginSettings(BaseModel):
    """A user's bot: exactly one of ``path`` ("pkg.module:Class") or ``entry_point`` (a name in
    the ``bettor_arena.bettors`` group); ``settings`` are passed to it as keyword arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str | None = Field(None, min_length=1)
    entry_point: str | None = Field(None, min_length=1)
    settings: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_source(self) -> PluginSettings:
        if (self.path is None) == (self.entry_point is None):
            raise ValueError("give exactly one of 'path' (\"pkg.module:Class\") or 'entry_point'")
        return self

    def load(self) -> tuple[Factory, str]:
        """The plug-in factory and a label naming where it came from."""
        if self.path is not None:
            return load_by_path(self.path), f"plugin {self.path!r}"
        assert self.entry_point is not None  # guaranteed by _one_source
        return load_by_entry_point(self.entry_point), f"plugin entry point {self.entry_point!r}"


@dataclass(frozen=True, slots=True)
class BuildContext:
    """What a kind may need besides its settings when it is built."""

    name: str
    seed: int
    environ: Mapping[str, str]
    new_http_client: NewHttpClient | None


@dataclass(frozen=True, slots=True)
class Kind:
    """How one kind is checked and built. ``check`` runs extra checks beyond the settings model."""

    settings_model: Callable[[], type[BaseModel]]
    build: Callable[[Any, BuildContext], Bettor]
    check: Callable[[Any, Mapping[str, str]], None] | None = None


def _llm_settings_model() -> type[BaseModel]:
    from agents.llm.settings import LLMSettings  # lazy: the LLM package is optional for other kinds

    return LLMSettings


def _llm_api_key(settings: Any, environ: Mapping[str, str]) -> str | None:
    """The key from the variable named by ``api_key_env``; None is allowed only for a local
    server and the mock provider (which answers in-process)."""
    if settings.is_mock:
        return None
    env_name = settings.api_key_env
    key = environ.get(env_name) if env_name else None
    if not key and urlparse(settings.base_url).hostname not in LOCAL_HOSTS:
        wanted = f"environment variable {env_name!r} is not set" if env_name else "'api_key_env' is empty"
        raise AgentConfigError(
            f"llm settings: api_key_env: {wanted}; set it to the API key for {settings.base_url} "
            "(only a local server on localhost/127.0.0.1 needs no key)"
        )
    return key or None


def _llm_endpoint_checked(settings: Any, environ: Mapping[str, str]) -> None:
    """Every ``env:`` reference of the headers and ``base_url`` names a variable that is set."""
    from agents.llm.endpoint import references

    for name in references(settings.extra_headers, settings.base_url):
        if not environ.get(name):
            raise AgentConfigError(
                f'llm settings: environment variable {name!r} (named by an "env:" value) is not set'
            )


def _check_llm(settings: Any, environ: Mapping[str, str]) -> None:
    _llm_api_key(settings, environ)
    _llm_endpoint_checked(settings, environ)


def _build_llm(settings: Any, ctx: BuildContext) -> Bettor:
    from agents.llm.bettor import LLMBettor

    if settings.is_mock:
        from agents.llm.mock import mock_client

        return LLMBettor(ctx.name, settings, mock_client(settings), None)
    if ctx.new_http_client is None:
        raise AgentConfigError(f"llm agent {ctx.name!r}: build_bettor needs new_http_client")
    key = _llm_api_key(settings, ctx.environ)
    _llm_endpoint_checked(settings, ctx.environ)
    bettor: Bettor = LLMBettor(ctx.name, settings, ctx.new_http_client(), key, ctx.environ)
    return bettor


def _check_plugin(settings: PluginSettings, environ: Mapping[str, str]) -> None:
    factory, where = settings.load()
    call_arguments(factory, where, name="check", settings=settings.settings, seed=0)


def _build_plugin(settings: PluginSettings, ctx: BuildContext) -> Bettor:
    factory, where = settings.load()
    return instantiate(factory, where, name=ctx.name, settings=settings.settings, seed=ctx.seed)


def _check_scripted(settings: ScriptedSettings, environ: Mapping[str, str]) -> None:
    load_script(settings.path)


def _not_run(*_: object) -> NoReturn:
    """An external forecaster's seat is imported, never built or launched (``agents.external``)."""
    raise AgentConfigError(NOT_RUN)


KINDS: dict[str, Kind] = {
    "hold": Kind(lambda: NoSettings, lambda s, ctx: HoldBettor(ctx.name)),
    "market": Kind(lambda: NoSettings, lambda s, ctx: MarketBettor(ctx.name)),
    "half": Kind(lambda: NoSettings, lambda s, ctx: HalfBettor(ctx.name)),
    "random": Kind(lambda: RandomSettings, lambda s, ctx: RandomBettor(ctx.name, s, seed=ctx.seed)),
    "favorite": Kind(lambda: FractionSettings, lambda s, ctx: FavoriteBettor(ctx.name, s)),
    "contrarian": Kind(lambda: FractionSettings, lambda s, ctx: FavoriteBettor(ctx.name, s, against=True)),
    "kelly": Kind(lambda: KellySettings, lambda s, ctx: MomentumKellyBettor(ctx.name, s)),
    "crowd": Kind(lambda: CrowdSettings, lambda s, ctx: CrowdBettor(ctx.name, s)),
    "llm": Kind(_llm_settings_model, _build_llm, _check_llm),
    "plugin": Kind(lambda: PluginSettings, _build_plugin, _check_plugin),
    "scripted": Kind(
        lambda: ScriptedSettings, lambda s, ctx: ScriptedBettor.from_settings(ctx.name, s), _check_scripted
    ),
    EXTERNAL_KIND: Kind(lambda: ExternalSettings, _not_run, _not_run),
}


def _kind(kind: str) -> Kind:
    if kind not in KINDS:
        raise AgentConfigError(f"unknown agent kind {kind!r}; known kinds: {', '.join(KINDS)}")
    return KINDS[kind]


def _settings(kind: str, settings: Mapping[str, Any]) -> Any:
    """The kind's settings model filled from ``settings``, or one line per problem."""
    try:
        model = _kind(kind).settings_model()
    except ImportError as exc:
        raise AgentConfigError(f"{kind} agents are unavailable: {exc}") from exc
    try:
        return model.model_validate(dict(settings))
    except ValidationError as exc:
        problems = "; ".join(_describe(error, model) for error in exc.errors())
        raise AgentConfigError(f"{kind} settings: {problems}") from None


def _describe(error: Mapping[str, Any], model: type[BaseModel]) -> str:
    """One problem as "key: what was expected". Strings are never echoed: they may be secrets."""
    key = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        known = sorted(model.model_fields)
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        return f"{key}: unknown setting (known: {', '.join(known) or 'none'}){hint}"
    if error["type"] == "missing":
        return f"{key}: required setting is missing"
    message = str(error["msg"]).removeprefix("Value error, ")
    value = error.get("input")
    shown = f" (got {value!r})" if isinstance(value, int | float | Decimal) or value is None else ""
    return f"{key or 'settings'}: {message}{shown}"


def model_identity(kind: str, settings: Mapping[str, Any]) -> str:
    """What makes two seats the same bettor across cohorts, whatever their display names.

    An LLM is its model, endpoint and prompt: ``llm <model> @ <endpoint> prompt <version>``, the
    endpoint being the ``base_url`` as it may be shown (defaults filled in, so an omitted
    ``base_url`` and the OpenRouter URL are one; only these settings are read, so settings an
    older version stored with a secret still have an identity, never showing it), except that
    every server on this machine (localhost, 127.0.0.1, ::1, any port) is ``local``: one model
    served on two local ports is one bettor, as the port says how a server was started, not what it
    serves. A mock is ``llm mock/<model> @ mock`` with its non-default policy settings. Every other
    kind is its kind and the settings that differ from their defaults, readably: ``kelly``,
    ``favorite (fraction 0.1)``; a ``favorite`` staking 5% and one staking 10% are different bettors.
    """
    if kind == "llm":
        from agents.llm.endpoint import display_url
        from agents.llm.settings import OPENROUTER_BASE_URL

        read = {k: v for k, v in settings.items() if k in ("model", "prompt_version", "provider", "mock")}
        identity = _settings(kind, read)
        url = display_url(str(settings.get("base_url") or OPENROUTER_BASE_URL))
        endpoint = "local" if urlparse(url).hostname in LOCAL_HOSTS else url
        if identity.is_mock:
            policy = _readable(identity.mock.model_dump(mode="json", exclude_defaults=True))
            endpoint = "mock" + (f" ({policy})" if policy else "")
        return f"llm {identity.shown_model} @ {endpoint} prompt {identity.prompt_version}"
    parsed = _settings(kind, settings)
    changed = _readable(parsed.model_dump(mode="json", exclude_defaults=True))
    return f"{kind} ({changed})" if changed else kind


def _readable(fields: Mapping[str, Any]) -> str:
    """``key value, key value`` in key order; nested values as compact JSON."""
    return ", ".join(
        f"{key} {value if _plain(value) else json.dumps(value, sort_keys=True)}"
        for key, value in sorted(fields.items())
    )


def _plain(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def shown_model(kind: str, settings: Mapping[str, Any]) -> str | None:
    """The model an agent is shown with (its row's ``model_id``): an LLM's model, ``mock/<model>``
    for the mock provider; None for every other kind."""
    if kind != "llm":
        return None
    model: str = _settings(kind, settings).shown_model
    return model


def validate_agent(kind: str, settings: Mapping[str, Any], *, environ: Mapping[str, str]) -> None:
    """Check a kind and its settings completely (files load, plug-ins import, keys exist) without
    building anything; raises ``AgentConfigError`` naming the key and what was expected."""
    check = _kind(kind).check
    parsed = _settings(kind, settings)
    if check is not None:
        with _kind_errors():
            check(parsed, environ)


def build_bettor(
    name: str,
    kind: str,
    settings: Mapping[str, Any],
    *,
    seed: int,
    environ: Mapping[str, str],
    new_http_client: NewHttpClient | None,
) -> Bettor:
    """The Bettor for one configured agent. ``seed`` is the cohort seed (for seeded kinds);
    ``environ`` is read only for an LLM's API key, which goes to the LLMBettor and nowhere else;
    ``new_http_client`` is called once per LLM agent for a client of its own."""
    parsed = _settings(kind, settings)
    ctx = BuildContext(name=name, seed=seed, environ=environ, new_http_client=new_http_client)
    with _kind_errors():
        return _kind(kind).build(parsed, ctx)


@contextmanager
def _kind_errors() -> Iterator[None]:
    """Turn the kinds' own errors (plug-in, script, missing LLM package) into AgentConfigError."""
    try:
        yield
    except (PluginError, ScriptError) as exc:
        raise AgentConfigError(str(exc)) from exc
    except ImportError as exc:
        raise AgentConfigError(f"agent kind unavailable: {exc}") from exc
