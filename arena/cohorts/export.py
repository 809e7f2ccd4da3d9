"""A frozen cohort config written back as TOML: the file that relaunches the same cohort.

``config_toml`` turns the frozen config (the JSON stored with the cohort: every default filled
in) into a TOML file that ``load_config`` reads back into a config with the same hash, so
``arena cohort export ID > cohort.toml`` then ``arena replay cohort.toml`` reruns the cohort
exactly. Values are written as the frozen JSON holds them (money and durations as strings,
times as ISO strings); a ``null`` is left out, since TOML has none and every nullable key's
default is null. Tables become ``[section]`` headers, agents ``[[agents]]`` entries with their
nested settings inline. Redacting secrets is the caller's part (``arena.reports.redact``): a
config should hold none, as keys are named by ``api_key_env``, never written.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

CONFIG_FILE = "config.toml"  # a report bundle's copy of its cohort's config
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def config_toml(config: Mapping[str, Any], *, header: Sequence[str] = ()) -> str:
    """The TOML text of a frozen config; ``header`` lines are written first as comments."""
    lines = [f"# {line}" for line in header]
    scalars = {k: v for k, v in config.items() if not isinstance(v, Mapping) and k != "agents"}
    lines += _assignments(scalars)
    for key, value in config.items():
        if isinstance(value, Mapping):
            lines += _table([key], value)
    for agent in config.get("agents") or ():
        lines += ["", "[[agents]]", *_assignments(agent)]
    return "\n".join(lines).lstrip("\n") + "\n"


def _table(path: list[str], table: Mapping[str, Any]) -> list[str]:
    """``[a.b]`` with its scalars, then its sub-tables (a table with only sub-tables gets no header)."""
    scalars = {k: v for k, v in table.items() if not isinstance(v, Mapping) and v is not None}
    lines = ["", f"[{'.'.join(_key(p) for p in path)}]", *_assignments(scalars)] if scalars else []
    for key, value in table.items():
        if isinstance(value, Mapping):
            lines += _table([*path, key], value)
    return lines


def _assignments(values: Mapping[str, Any]) -> list[str]:
    return [f"{_key(key)} = {_value(value)}" for key, value in values.items() if value is not None]


def _key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _value(value: Any) -> str:
    """A TOML value: JSON's string escapes are TOML's; tables inline; nulls inside left out."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(_assignments(value)) + " }" if value else "{}"
    if isinstance(value, Iterable):
        return "[" + ", ".join(_value(item) for item in value if item is not None) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)
