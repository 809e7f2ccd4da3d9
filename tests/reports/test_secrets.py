"""No secret reaches a report: not in any file, not inside the zip, not inside Parquet pages."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import polars as pl
from sqlalchemy import Engine

from arena.core.clock import SimulatedClock
from arena.reports.bundle import build_report
from arena.reports.redact import REDACTED, Redactor
from tests.dashboard.world import OLD_CONFIG_SECRETS, REPLAY, plant_old_config_secrets
from tests.reports.conftest import PLANTED


def _parquet_text(data: bytes) -> str:
    """Every decoded value of a Parquet file as text (compressed pages hide bytes from a grep)."""
    frame = pl.read_parquet(io.BytesIO(data))
    return frame.select(pl.all().cast(pl.String)).write_csv()


def _leaks(name: str, data: bytes) -> list[str]:
    found = [name] if PLANTED.encode() in data else []
    if name.endswith(".parquet") and PLANTED in _parquet_text(data):
        found.append(f"{name} (decoded)")
    if name.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                found += _leaks(f"{name}!{member}", archive.read(member))
    return found


def test_a_planted_key_appears_nowhere_in_the_bundle(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    report = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ)

    out = tmp_path / "out"
    files = [p for p in out.rglob("*") if p.is_file()]
    assert report.zip in files and len(files) == 30  # 24 tables, html, md, config, metrics, manifest, zip
    leaks = [leak for path in files for leak in _leaks(str(path.relative_to(out)), path.read_bytes())]
    assert leaks == []
    decisions = (report.folder / "tables/decisions.csv").read_text()
    assert decisions.count(REDACTED) >= 8  # the planted places were redacted, not dropped


def test_key_shaped_text_is_redacted_even_when_not_in_the_environment() -> None:
    redactor = Redactor.from_environ({})
    text = "401 for key sk-ant-api03-abcdefghijklmnop; header Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x"
    assert redactor.text(text) == f"401 for key {REDACTED}; header Authorization: Bearer {REDACTED}"
    url = "postgresql://arena:hunter2pass@db.example.org/arena"
    assert redactor.text(url) == f"postgresql://{REDACTED}@db.example.org/arena"


def test_environment_values_are_redacted_by_variable_name_only() -> None:
    redactor = Redactor.from_environ(
        {"MY_SERVICE_TOKEN": "tok-12345678", "HOME": "/root/home-12345678", "SHORT_KEY": "abc"}
    )
    assert redactor.values == ("tok-12345678",)
    frame = pl.DataFrame({"text": ["use tok-12345678 at /root/home-12345678", None], "n": [1, 2]})
    assert redactor.frame(frame).to_dicts() == [
        {"text": f"use {REDACTED} at /root/home-12345678", "n": 1},
        {"text": None, "n": 2},
    ]


def test_secret_keyed_settings_are_replaced_but_variable_names_kept() -> None:
    redactor = Redactor.from_environ({})
    document = {"agents": [{"api_key": "plain-value-123", "api_key_env": "OPENROUTER_API_KEY", "model": "m"}]}
    assert redactor.document(document) == {
        "agents": [{"api_key": REDACTED, "api_key_env": "OPENROUTER_API_KEY", "model": "m"}]
    }


def test_secrets_an_older_config_held_in_headers_and_urls_appear_nowhere(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    plant_old_config_secrets(world, REPLAY)
    report = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ={})
    out = tmp_path / "out"
    files = [p for p in out.rglob("*") if p.is_file()]
    found = [
        (str(path.relative_to(out)), secret)
        for path in files
        for secret in OLD_CONFIG_SECRETS
        if secret in _all_text(path)
    ]
    assert found == []
    agents = (report.folder / "tables/agents.csv").read_text()
    assert '""X-Title"": ""arena""' in agents and "api-version=2024" in agents  # harmless values stay


def _all_text(path: Path) -> str:
    data = path.read_bytes()
    text = data.decode("utf-8", errors="replace")
    if path.suffix == ".parquet":
        text += _parquet_text(data)
    if path.suffix == ".zip":
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                inner = archive.read(member)
                text += inner.decode("utf-8", errors="replace")
                if member.endswith(".parquet"):
                    text += _parquet_text(inner)
    return text
