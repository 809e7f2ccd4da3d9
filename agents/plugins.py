"""Bring-your-own-bot: load a user's Bettor class by import path or by entry point.

A plug-in is any class (or factory) called as ``Factory(name=<agent name>, **settings)`` — plus
``seed=<cohort seed>`` when its signature has a ``seed`` parameter — whose result satisfies the
``Bettor`` protocol. Problems are reported before a cohort starts, naming the plug-in and what is
missing, because a bot that fails in round 40 of a live cohort costs weeks.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, cast

from agents.types import Bettor

ENTRY_POINT_GROUP = "bettor_arena.bettors"
RESERVED = frozenset({"name", "seed"})

Factory = Callable[..., object]


class PluginError(ValueError):
    """A plug-in cannot be loaded, does not accept its settings, or is not a Bettor."""


def load_by_path(path: str) -> Factory:
    """Resolve ``"package.module:Attribute"`` (the attribute may be dotted, ``Outer.Inner``)."""
    module_name, sep, attribute = path.partition(":")
    if not sep or not module_name or not attribute:
        raise PluginError(f"plugin path {path!r}: expected 'package.module:ClassName'")
    try:
        target: object = importlib.import_module(module_name)
    except ImportError as exc:
        hint = _importable_hint(module_name, exc)
        raise PluginError(f"plugin {path!r}: cannot import module {module_name!r}: {exc}{hint}") from exc
    except Exception as exc:  # the user's module failed while running its top-level code
        raise PluginError(
            f"plugin {path!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from exc
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise PluginError(f"plugin {path!r}: module {module_name!r} has no attribute {attribute!r}")
        target = getattr(target, part)
    return _callable(target, f"plugin {path!r}")


def _importable_hint(module_name: str, exc: ImportError) -> str:
    """How to make the plug-in's own module importable, when that module is what was not found
    (not a module it imports in turn): Python looks on ``sys.path``, which a script's folder is on
    but the ``arena`` command's working directory is not."""
    missing = getattr(exc, "name", None)
    if missing is None or module_name.split(".")[0] != missing.split(".")[0]:
        return ""
    return (
        f"; make it importable: run arena with PYTHONPATH=. from the folder holding {missing}.py "
        f"(or {missing}/), or install it (pip install -e .)"
    )


def load_by_entry_point(name: str, group: str = ENTRY_POINT_GROUP) -> Factory:
    """Resolve an installed distribution's entry point ``name`` in ``group``."""
    found = [ep for ep in entry_points(group=group) if ep.name == name]
    if not found:
        known = sorted({ep.name for ep in entry_points(group=group)})
        listing = ", ".join(known) if known else "none installed"
        raise PluginError(f"plugin entry point {name!r} not found in group {group!r} (available: {listing})")
    where = f"plugin entry point {name!r} ({found[0].value})"
    try:
        target = found[0].load()
    except Exception as exc:  # missing module or attribute, or the module's own top-level code failed
        raise PluginError(f"{where}: cannot load: {type(exc).__name__}: {exc}") from exc
    return _callable(target, where)


def _callable(target: object, where: str) -> Factory:
    if not callable(target):
        raise PluginError(f"{where}: is a {type(target).__name__}, expected a Bettor class or factory")
    decide = getattr(target, "decide", None) if inspect.isclass(target) else None
    if inspect.isclass(target) and not inspect.iscoroutinefunction(decide):
        raise PluginError(f"{where}: class has no 'async def decide(self, view)' method")
    return cast(Factory, target)


def call_arguments(
    factory: Factory, where: str, *, name: str, settings: Mapping[str, Any], seed: int
) -> dict[str, Any]:
    """The keyword arguments the factory is called with, checked against its signature."""
    reserved = sorted(RESERVED & settings.keys())
    if reserved:
        raise PluginError(f"{where}: settings may not set {reserved}: the arena passes them")
    kwargs: dict[str, Any] = {"name": name, **settings}
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a callable without an introspectable signature: the call decides
        return kwargs
    if "seed" in signature.parameters:
        kwargs["seed"] = seed
    try:
        signature.bind(**kwargs)
    except TypeError as exc:
        label = getattr(factory, "__qualname__", type(factory).__name__)
        bare = signature.replace(
            parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
            return_annotation=signature.empty,
        )
        raise PluginError(f"{where}: settings do not fit {label}{bare}: {exc}") from exc
    return kwargs


def protocol_problems(bettor: object, name: str) -> list[str]:
    """What keeps ``bettor`` from being a usable Bettor named ``name`` (empty when it is one)."""
    problems: list[str] = []
    actual = getattr(bettor, "name", None)
    if not isinstance(actual, str):
        problems.append("missing 'name' (str) attribute")
    elif actual != name:
        problems.append(f"'name' is {actual!r} but the agent is called {name!r} (use the name argument)")
    if not isinstance(getattr(bettor, "uses_peers", None), bool):
        problems.append("missing 'uses_peers' (bool) attribute")
    if not inspect.iscoroutinefunction(getattr(bettor, "decide", None)):
        problems.append("missing 'async def decide(self, view) -> Decision' method")
    return problems


def instantiate(factory: Factory, where: str, *, name: str, settings: Mapping[str, Any], seed: int) -> Bettor:
    """Call the factory with the agent name, its settings and (if wanted) the seed; check the result."""
    kwargs = call_arguments(factory, where, name=name, settings=settings, seed=seed)
    try:
        bettor = factory(**kwargs)
    except Exception as exc:  # the plug-in's own validation of its settings
        raise PluginError(f"{where}: rejected its settings: {type(exc).__name__}: {exc}") from exc
    problems = protocol_problems(bettor, name)
    if problems:
        raise PluginError(f"{where} is not a Bettor: " + "; ".join(problems))
    return cast(Bettor, bettor)
