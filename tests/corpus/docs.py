"""Corpus files for tests: documents written as JSONL lines, as a user's file would hold them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def doc(doc_id: str, day: float, title: str, text: str = "", **extra: Any) -> dict[str, Any]:
    """A document published ``day`` days after ``T0``."""
    when = (T0 + timedelta(days=day)).isoformat()
    return {"id": doc_id, "published_at": when, "title": title, "text": text, **extra}


def write_jsonl(path: Path, rows: list[dict[str, Any]] | list[str]) -> Path:
    """One line per row: a dict as JSON, a string as it is (to plant broken lines)."""
    lines = (row if isinstance(row, str) else json.dumps(row) for row in rows)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
