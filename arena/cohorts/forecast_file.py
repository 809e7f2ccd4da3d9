"""Import external forecasts from a CSV or JSONL file into an existing cohort.

``arena data import-forecasts``: a lab's human panel or an offline model run sits beside the
cohort's agents on the markets the cohort offered, scored on the same events with the same
intervals and comparisons. Each row is one forecast: ``forecaster`` (an agent name: letters,
digits, ``_.-``), ``market_id`` (the arena id ``venue:venue_id``), ``time`` (ISO 8601 with a
zone), ``probability`` in [0, 1] and, optionally, ``outcome`` (default ``YES``; a
multi-outcome market needs it).

Point in time: a forecast counts from its ``time`` and is refused when the cohort never offered
its market, or when it comes at or after the market's close or resolution, or after now. A
forecaster new to the cohort is seated as an external agent; one the cohort already has must
be external. Limits: ``MAX_FILE_BYTES``, ``MAX_ROWS``, ``MAX_FORECASTERS`` and ``MAX_FIELD``
characters per field. The first problem stops the import with one line naming the row; nothing
is written unless every row is good.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from agents.external import EXTERNAL_KIND
from arena.cohorts.external_seats import ExternalForecast, seat_external, store_forecasts
from arena.core.clock import Clock, ensure_utc
from arena.db.engine import session_scope
from arena.db.models import AgentRow, CohortRow, ExternalForecastRow, MarketRow, ResolutionRow
from arena.db.offered import first_offered

REQUIRED = ("forecaster", "market_id", "time", "probability")
COLUMNS = (*REQUIRED, "outcome")
MAX_FILE_BYTES = 50 * 1024 * 1024
MAX_ROWS = 200_000
MAX_FORECASTERS = 1_000
MAX_FIELD = 200
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")  # as a cohort config's agent names
YES = "YES"


class ForecastFileError(ValueError):
    """A forecasts file (or one of its rows) that cannot be imported; one line saying where."""


@dataclass(frozen=True)
class FileRow:
    """One forecast as read, with the row number (data rows count from 1 after a CSV header)."""

    row: int
    forecaster: str
    market_id: str
    time: datetime
    p: float
    outcome: str | None


@dataclass(frozen=True)
class ImportedForecasts:
    forecasts: int
    forecasters: int
    seated: int  # forecasters new to the cohort


def read_forecast_file(path: Path) -> list[FileRow]:
    """The rows of a ``.csv`` (with a header) or ``.jsonl`` file, checked field by field."""
    kind = path.suffix.lower()
    if kind not in (".csv", ".jsonl"):
        raise ForecastFileError(f"{path}: expected a .csv or .jsonl file")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ForecastFileError(f"{path}: {size:,} bytes, over the limit of {MAX_FILE_BYTES:,}")
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ForecastFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ForecastFileError(f"{path}: not UTF-8 text") from None
    records = _csv_records(path, text) if kind == ".csv" else _jsonl_records(path, text)
    rows = []
    for number, record in records:
        if number > MAX_ROWS:
            raise ForecastFileError(f"{path}: more than {MAX_ROWS:,} rows")
        rows.append(_row(path, number, record))
    if not rows:
        raise ForecastFileError(f"{path}: no forecasts")
    return rows


def _csv_records(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    _check_columns(path, list(reader.fieldnames or []))
    for number, record in enumerate(reader, start=1):
        if None in record or any(v is None for v in record.values()):
            raise ForecastFileError(f"{path} row {number}: expected {len(reader.fieldnames or [])} fields")
        yield number, record


def _jsonl_records(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, Any]]]:
    for number, line in enumerate((line for line in text.splitlines() if line.strip()), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ForecastFileError(f"{path} row {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ForecastFileError(f"{path} row {number}: expected a JSON object")
        _check_columns(path, list(record), row=number)
        yield number, record


def _check_columns(path: Path, names: list[str], row: int | None = None) -> None:
    where = f"{path}" if row is None else f"{path} row {row}"
    unknown = [n for n in names if n not in COLUMNS]
    missing = [n for n in REQUIRED if n not in names]
    if unknown or missing:
        problem = f"unknown field(s) {', '.join(map(repr, unknown))}" if unknown else ""
        problem += ("; " if unknown and missing else "") + (
            f"missing {', '.join(missing)}" if missing else ""
        )
        raise ForecastFileError(f"{where}: {problem} (fields: {', '.join(COLUMNS)}; outcome optional)")


def _row(path: Path, number: int, record: Mapping[str, Any]) -> FileRow:
    where = f"{path} row {number}"

    def text(key: str) -> str:
        value = record.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            raise ForecastFileError(f"{where}, field '{key}': empty")
        value = str(value).strip()
        if len(value) > MAX_FIELD:
            raise ForecastFileError(f"{where}, field '{key}': over {MAX_FIELD} characters")
        return value

    forecaster = text("forecaster")
    if not AGENT_NAME.match(forecaster):
        raise ForecastFileError(
            f"{where}, field 'forecaster': {forecaster!r} is not an agent name "
            "(letters, digits, _ . -; 64 characters at most; starting with a letter or digit)"
        )
    outcome = record.get("outcome")
    return FileRow(
        number,
        forecaster,
        text("market_id"),
        _time(where, text("time")),
        _probability(where, record.get("probability")),
        None if outcome is None or str(outcome).strip() == "" else text("outcome"),
    )


def _time(where: str, value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ForecastFileError(f"{where}, field 'time': {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None:
        raise ForecastFileError(f"{where}, field 'time': {value!r} has no time zone (e.g. +00:00 or Z)")
    return moment.astimezone(UTC)


def _probability(where: str, value: Any) -> float:
    try:
        p = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        p = math.nan
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise ForecastFileError(f"{where}, field 'probability': {value!r} is not a probability in [0, 1]")
    return p


def import_forecasts(
    engine: Engine, cohort_id: str, rows: list[FileRow], *, source: str, clock: Clock
) -> ImportedForecasts:
    """Check every row against the cohort and store them all (see the module docstring)."""
    now = clock.now()
    with session_scope(engine) as session:
        cohort = session.get(CohortRow, cohort_id)
        if cohort is None:
            raise ForecastFileError(f"cohort {cohort_id!r} not found (see `arena cohort list`)")
        seats = _seats(session, cohort_id, rows)
        forecasts = _checked(session, cohort_id, rows, now)
        _not_stored(session, cohort_id, forecasts, rows)
        new = sorted({r.forecaster for r in rows} - set(seats))
        settings = {"source": source}
        seats |= {
            name: seat_external(session, cohort_id, name, settings | {"forecaster": name}, now)
            for name in new
        }
        written = store_forecasts(session, cohort_id, seats, forecasts, source=source)
    return ImportedForecasts(written, len({r.forecaster for r in rows}), len(new))


def _seats(session: Session, cohort_id: str, rows: list[FileRow]) -> dict[str, int]:
    """The cohort's external agents named in ``rows``; a name held by another kind is refused."""
    names = {r.forecaster for r in rows}
    if len(names) > MAX_FORECASTERS:
        raise ForecastFileError(f"{len(names):,} forecasters, over the limit of {MAX_FORECASTERS:,}")
    stored = session.exec(
        select(AgentRow.name, AgentRow.kind, AgentRow.id).where(
            AgentRow.cohort_id == cohort_id, col(AgentRow.name).in_(sorted(names))
        )
    ).all()
    seats = {}
    for name, kind, agent_id in stored:
        if kind != EXTERNAL_KIND:
            first = next(r.row for r in rows if r.forecaster == name)
            raise ForecastFileError(
                f"row {first}: {name!r} is an agent of cohort {cohort_id} of kind {kind}, not an external "
                "forecaster: choose another name"
            )
        assert agent_id is not None
        seats[name] = agent_id
    return seats


def _checked(session: Session, cohort_id: str, rows: list[FileRow], now: datetime) -> list[ExternalForecast]:
    """The rows as forecasts, each checked against the cohort's markets and the present."""
    offered = {m: at for _, m, at in first_offered(session.connection(), [cohort_id])}
    ids = sorted({r.market_id for r in rows} & set(offered))
    markets = {m.id: m for m in session.exec(select(MarketRow).where(col(MarketRow.id).in_(ids)))}
    ended = dict(
        session.exec(
            select(ResolutionRow.market_id, ResolutionRow.resolved_at).where(
                col(ResolutionRow.market_id).in_(ids)
            )
        ).all()
    )
    seen: dict[tuple[str, str, str, datetime], int] = {}
    forecasts = []
    for r in rows:
        market = markets.get(r.market_id)
        if market is None:
            raise ForecastFileError(
                f"row {r.row}: market {r.market_id!r} was never offered to cohort {cohort_id}"
            )
        outcome = _outcome(r, market.outcomes_json)
        _in_time(r, now, market.close_time, ended.get(r.market_id))
        key = (r.forecaster, r.market_id, outcome, r.time)
        if key in seen:
            raise ForecastFileError(
                f"row {r.row}: the same forecaster, market, outcome and time as row {seen[key]}"
            )
        seen[key] = r.row
        forecasts.append(ExternalForecast(r.forecaster, r.market_id, outcome, r.p, r.time))
    return forecasts


def _outcome(r: FileRow, outcomes: list[str]) -> str:
    if r.outcome is None:
        if YES in outcomes:
            return YES
        raise ForecastFileError(
            f"row {r.row}: market {r.market_id} has outcomes {', '.join(outcomes)}: give the outcome"
        )
    if r.outcome not in outcomes:
        raise ForecastFileError(
            f"row {r.row}: {r.outcome!r} is not an outcome of {r.market_id} ({', '.join(outcomes)})"
        )
    return r.outcome


def _in_time(r: FileRow, now: datetime, close: datetime | None, resolved: datetime | None) -> None:
    """A forecast made after now, or at or after the market closed or resolved, cannot count."""
    if r.time > now:
        raise ForecastFileError(
            f"row {r.row}: time {r.time.isoformat()} is in the future (now {now.isoformat()})"
        )
    for label, end in (("closed", close), ("resolved", resolved)):
        if end is not None and r.time >= ensure_utc(end):
            raise ForecastFileError(
                f"row {r.row}: time {r.time.isoformat()} is not before market {r.market_id} {label} "
                f"({ensure_utc(end).isoformat()})"
            )


def _not_stored(
    session: Session, cohort_id: str, forecasts: list[ExternalForecast], rows: list[FileRow]
) -> None:
    """Refuse a forecast the cohort already holds (the same forecaster, market, outcome and time)."""
    stored = session.exec(
        select(
            AgentRow.name,
            ExternalForecastRow.market_id,
            ExternalForecastRow.outcome,
            ExternalForecastRow.stated_at,
        )
        .join(AgentRow, col(AgentRow.id) == col(ExternalForecastRow.agent_id))
        .where(ExternalForecastRow.cohort_id == cohort_id)
    ).all()
    held = {(a, m, o, ensure_utc(t)) for a, m, o, t in stored}
    for f, r in zip(forecasts, rows, strict=True):
        if (f.agent, f.market_id, f.outcome, f.stated_at) in held:
            raise ForecastFileError(
                f"row {r.row}: already imported into cohort {cohort_id} "
                f"({f.agent}, {f.market_id}, {f.stated_at.isoformat()})"
            )
