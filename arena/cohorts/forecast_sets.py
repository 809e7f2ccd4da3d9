"""Read a ForecastBench question set, its forecast sets and a resolution set into one ``ForecastSet``.

Only the market questions are read (Manifold, Metaculus, INFER, Polymarket): ForecastBench's
dataset questions (ACLED, FRED, …) resolve per horizon against a data series, which no arena
market carries, so they and their forecasts are counted and left out. ForecastBench's rules,
kept here (docs/humans.md):

- A market question is one question: the resolution set repeats it once per horizon (7, 30,
  90 days …) with the same ``resolved`` and ``resolved_to``; those rows must agree, and count once.
- A market question absent from the resolution set is left out (ForecastBench drops it: it
  resolved before the forecast due date, or was annulled), with its forecasts.
- ``resolved`` true: ``resolved_to`` (0 or 1) is the outcome. False: ``resolved_to`` is the
  market's latest value, the provisional outcome of an unresolved market.
- Every forecast row counts; a forecaster has at most one forecast per question. A forecast set
  whose rows carry a ``user_id`` is a panel (one forecaster per user, plus the panel's median,
  mean and geometric mean per question, as ``agents.crowd.aggregate`` combines them); one without
  is a single forecaster (a model's forecast set).

Every file is bounded (``MAX_FILE_BYTES``, ``MAX_ROWS``); a problem is a ``ForecastSetError`` of
one line naming the file, the row and the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from agents.crowd import aggregate
from agents.external import AggregateMethod

MARKET_SOURCES = ("manifold", "metaculus", "infer", "polymarket")
AGGREGATES: tuple[AggregateMethod, ...] = ("median", "mean", "geo_mean")
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_ROWS = 500_000
PRICE_PLACES = Decimal("1e-10")  # the precision the arena stores prices at
NAME = re.compile(r"[^A-Za-z0-9_.\-]+")
_DATED = re.compile(r"(\d{4}-\d{2}-\d{2})\.json$")


class ForecastSetError(ValueError):
    """A forecast-set file that cannot be imported; one line naming the file, row and field."""


@dataclass(frozen=True)
class SetMarket:
    """A market question of the set, with what the files say about it."""

    source: str
    venue_id: str
    question: str
    background: str
    url: str | None
    open_time: datetime | None
    close_time: datetime | None
    freeze_at: datetime
    freeze_value: Decimal
    resolved: bool
    value: Decimal  # the outcome (0 or 1) when resolved, else the market's latest value

    @property
    def market_id(self) -> str:
        # Metaculus and INFER are not venues the arena trades; their questions keep the same
        # ``source:id`` shape so an id never collides across sources.
        return f"{self.source}:{self.venue_id}"


@dataclass(frozen=True)
class Forecaster:
    """One forecaster of a set (or an aggregate of a panel): its forecasts by market id."""

    name: str
    settings: dict[str, str]
    forecasts: dict[str, float]


@dataclass
class ForecastSet:
    """Everything an import writes: the kept markets, the forecasters, and what was left out."""

    question_set: str
    due: datetime
    resolved_on: datetime
    markets: list[SetMarket]
    forecasters: list[Forecaster]
    left_out: dict[str, int] = field(default_factory=dict)


def read_forecast_set(
    questions: Path, forecasts: Sequence[Path], resolutions: Path, resolved_on: date | None = None
) -> ForecastSet:
    """The market questions, forecasters and outcomes of the files (see the module docstring).

    ``resolved_on`` is the night the resolution set was made (its values are of the day before);
    without it, the date in the resolution file's name (``…YYYY-MM-DD.json``) is used.
    """
    when = resolved_on or _dated(resolutions)
    question_doc = _document(questions, "questions")
    due = _date_field(questions, question_doc, "forecast_due_date")
    resolution_doc = _document(resolutions, "resolutions")
    if _date_field(resolutions, resolution_doc, "forecast_due_date") != due:
        raise ForecastSetError(f"{resolutions}: forecast_due_date differs from the question set's ({due:%F})")
    if when <= due.date():
        raise ForecastSetError(f"{resolutions}: resolution date {when} is not after the due date {due:%F}")
    asked = _market_questions(questions, question_doc["questions"])
    outcomes = _outcomes(resolutions, resolution_doc["resolutions"])
    kept = [_market(questions, q, outcomes[key]) for key, q in asked.items() if key in outcomes]
    result = ForecastSet(
        question_set=str(question_doc.get("question_set") or questions.name),
        due=due,
        resolved_on=datetime(when.year, when.month, when.day, tzinfo=UTC),
        markets=kept,
        forecasters=[],
    )
    dataset_questions = len(question_doc["questions"]) - len(asked)
    result.left_out = {
        "dataset questions (out of scope)": dataset_questions,
        "market questions absent from the resolution set": len(asked) - len(kept),
    }
    groups: set[str] = set()
    for path in forecasts:
        result.forecasters += _forecasters(path, due, asked, {m.market_id for m in kept}, groups, result)
    return result


def _dated(path: Path) -> date:
    found = _DATED.search(path.name)
    if found is None:
        raise ForecastSetError(
            f"{path}: give --resolution-date: the file name does not say which night the set was made "
            "(…YYYY-MM-DD.json)"
        )
    return date.fromisoformat(found.group(1))


def _document(path: Path, rows: str) -> dict[str, Any]:
    """The JSON object of ``path``, bounded in size, with a list ``rows`` of at most ``MAX_ROWS``."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ForecastSetError(f"{path}: {size:,} bytes, over the limit of {MAX_FILE_BYTES:,}")
        document = json.loads(path.read_bytes())
    except OSError as exc:
        raise ForecastSetError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ForecastSetError(f"{path}: not JSON ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get(rows), list):
        raise ForecastSetError(f"{path}: expected a JSON object with a list '{rows}'")
    if len(document[rows]) > MAX_ROWS:
        raise ForecastSetError(f"{path}: {len(document[rows]):,} {rows}, over the limit of {MAX_ROWS:,}")
    return document


def _date_field(path: Path, document: Mapping[str, Any], key: str) -> datetime:
    text = document.get(key)
    try:
        day = date.fromisoformat(str(text))
    except ValueError:
        raise ForecastSetError(f"{path}: {key} {text!r} is not a date (YYYY-MM-DD)") from None
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _field(path: Path, where: str, row: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(row, dict):
        raise ForecastSetError(f"{path}: {where} is not an object")
    value = row.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ForecastSetError(f"{path}: {where}.{key}: expected {_kind_name(kind)}, got {value!r:.60}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", bool: "true or false", int: "a number", float: "a number", list: "a list"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))


def _market_questions(path: Path, questions: list[Any]) -> dict[tuple[str, str], dict[str, Any]]:
    asked: dict[tuple[str, str], dict[str, Any]] = {}
    for i, q in enumerate(questions):
        where = f"questions[{i}]"
        source = _field(path, where, q, "source", str)
        if source not in MARKET_SOURCES:
            continue
        key = (source, _field(path, where, q, "id", str))
        if key in asked:
            raise ForecastSetError(f"{path}: {where}: question {key[0]}:{key[1]} is listed twice")
        asked[key] = q | {"_where": where}
    return asked


def _outcomes(path: Path, rows: list[Any]) -> dict[tuple[str, str], tuple[bool, float, str]]:
    """(resolved, resolved_to, where) per market question; its horizon rows must agree."""
    found: dict[tuple[str, str], tuple[bool, float, str]] = {}
    for i, row in enumerate(rows):
        where = f"resolutions[{i}]"
        source = _field(path, where, row, "source", str)
        if source not in MARKET_SOURCES or not isinstance(row.get("id"), str):
            continue  # dataset questions and combinations of two questions
        resolved = _field(path, where, row, "resolved", bool)
        value = _probability(
            path, where, "resolved_to", _field(path, where, row, "resolved_to", (int, float))
        )
        if resolved and value not in (0.0, 1.0):
            raise ForecastSetError(
                f"{path}: {where}.resolved_to: a resolved market resolves to 0 or 1, got {value}"
            )
        key = (source, row["id"])
        earlier = found.setdefault(key, (resolved, value, where))
        if earlier[:2] != (resolved, value):
            raise ForecastSetError(
                f"{path}: {where}: market {key[0]}:{key[1]} says {resolved}/{value} but {earlier[2]} "
                f"says {earlier[0]}/{earlier[1]} (a market question counts once)"
            )
    return found


def _probability(path: Path, where: str, key: str, value: float) -> float:
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ForecastSetError(f"{path}: {where}.{key}: {value} is not a probability in [0, 1]")
    return float(value)


def _market(path: Path, q: dict[str, Any], outcome: tuple[bool, float, str]) -> SetMarket:
    where = q["_where"]
    freeze = _field(path, where, q, "freeze_datetime_value", str)
    try:
        freeze_value = Decimal(freeze)
    except InvalidOperation:
        raise ForecastSetError(
            f"{path}: {where}.freeze_datetime_value: {freeze!r:.40} is not a number"
        ) from None
    _probability(path, where, "freeze_datetime_value", float(freeze_value))
    resolved, value, _ = outcome
    url = q.get("url")
    return SetMarket(
        source=q["source"],
        venue_id=q["id"],
        question=_field(path, where, q, "question", str),
        background=str(q.get("background") or ""),
        url=url if isinstance(url, str) and url.startswith(("https://", "http://")) else None,
        open_time=_time(path, where, q, "market_info_open_datetime", required=False),
        close_time=_time(path, where, q, "market_info_close_datetime", required=False),
        freeze_at=_time(path, where, q, "freeze_datetime", required=True),
        freeze_value=freeze_value.quantize(PRICE_PLACES),
        resolved=resolved,
        value=Decimal(repr(value)).quantize(PRICE_PLACES),
    )


def _time(path: Path, where: str, q: Mapping[str, Any], key: str, *, required: bool) -> Any:
    text = q.get(key)
    if not required and text in (None, "", "N/A"):
        return None
    try:
        moment = datetime.fromisoformat(str(text))
    except ValueError:
        raise ForecastSetError(f"{path}: {where}.{key}: {text!r:.40} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ForecastSetError(f"{path}: {where}.{key}: {text!r:.40} has no time zone")
    return moment.astimezone(UTC)


def _forecasters(
    path: Path,
    due: datetime,
    asked: Mapping[tuple[str, str], Any],
    kept: set[str],
    groups: set[str],
    result: ForecastSet,
) -> list[Forecaster]:
    """One forecast set's forecasters (a panel's users and aggregates, or the set's one model)."""
    document = _document(path, "forecasts")
    if _date_field(path, document, "forecast_due_date") != due:
        raise ForecastSetError(f"{path}: forecast_due_date differs from the question set's ({due:%F})")
    model = str(document.get("model") or path.stem)
    group = _group(model)
    if group in groups:
        raise ForecastSetError(f"{path}: a second forecast set of '{model}' (forecaster names would clash)")
    groups.add(group)
    source = f"ForecastBench {result.question_set}: {document.get('organization') or ''} {model}".strip()
    by_user: dict[str, dict[str, float]] = {}
    first: dict[tuple[str, str], str] = {}
    dataset_rows = dropped_rows = 0
    for i, row in enumerate(document["forecasts"]):
        where = f"forecasts[{i}]"
        key = (_field(path, where, row, "source", str), _field(path, where, row, "id", str))
        if key[0] not in MARKET_SOURCES:
            dataset_rows += 1
            continue
        if key not in asked:
            raise ForecastSetError(f"{path}: {where}: question {key[0]}:{key[1]} is not in the question set")
        market_id = f"{key[0]}:{key[1]}"
        if market_id not in kept:
            dropped_rows += 1
            continue
        user = row.get("user_id")
        user = group if user is None else str(_field(path, where, row, "user_id", str))
        p = _probability(path, where, "forecast", _field(path, where, row, "forecast", (int, float)))
        if market_id in by_user.setdefault(user, {}):
            raise ForecastSetError(
                f"{path}: {where}: a second forecast by {user!r} on {market_id} "
                f"(first: {first[(user, market_id)]})"
            )
        by_user[user][market_id] = p
        first[(user, market_id)] = where
    result.left_out[f"{path.name}: forecasts on dataset questions (out of scope)"] = dataset_rows
    result.left_out[f"{path.name}: forecasts on market questions left out"] = dropped_rows
    return _seats(group, source, by_user)


def _group(model: str) -> str:
    """``Superforecaster forecasts`` → ``superforecaster``: the prefix of the set's forecaster names."""
    slug = NAME.sub("-", model.strip().lower()).strip("-.")
    return slug.removesuffix("-forecasts").removesuffix("-forecast") or "forecaster"


def _seats(group: str, source: str, by_user: dict[str, dict[str, float]]) -> list[Forecaster]:
    """The forecasters of one set: a single one named ``group``, or each user and the aggregates."""
    if list(by_user) == [group]:
        return [Forecaster(group, {"source": source, "forecaster": group}, by_user[group])]
    seats = [
        Forecaster(_name(f"{group}-{user}"), {"source": source, "forecaster": user}, forecasts)
        for user, forecasts in sorted(by_user.items())
    ]
    markets = sorted({m for forecasts in by_user.values() for m in forecasts})
    for method in AGGREGATES:
        combined = {m: aggregate([f[m] for f in by_user.values() if m in f], method) for m in markets}
        seats.append(
            Forecaster(
                f"{group}-{method.replace('_', '-')}", {"source": source, "aggregate": method}, combined
            )
        )
    names = [s.name for s in seats]
    if len(set(names)) < len(names):
        raise ForecastSetError(f"forecaster names of {source!r} clash once made agent names: {names}")
    return seats


def _name(text: str) -> str:
    """An agent name (letters, digits, ``_.-``; 64 characters at most) from a forecaster's id."""
    return NAME.sub("-", text).strip("-._")[:64]
