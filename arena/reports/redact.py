"""Keep secrets out of everything the arena shows or exports (DESIGN: "Secrets stay secret").

API keys should never reach the database, but a report copies raw model responses, error texts,
agent settings and the frozen config, which is exactly where a leaked key would hide: an error
body echoing an ``Authorization`` header, a key pasted into a config by hand. So every text a
report writes, and every decision text the dashboard shows, passes through one ``Redactor``:

- the *values* of environment variables whose names say they hold a secret (``*_KEY``,
  ``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``...) are replaced wherever they appear;
- text shaped like a key (``sk-...``, ``Bearer ...``, a password inside a URL) is replaced
  even when the key is not in this process's environment;
- in JSON documents (configs, settings) a value stored under a secret-looking key is replaced
  whole; ``*_env`` keys are kept, since they only *name* a variable. An LLM agent's
  ``extra_headers`` keep only harmless values and ``env:`` references, and a ``base_url`` loses
  its userinfo and every query value but harmless ones and references
  (``agents.llm.endpoint``): a config stored by an older version may hold a cookie there.
  The ``settings_json`` and ``config_json`` columns of a table are read as such documents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from agents.llm.endpoint import display_headers, display_url

REDACTED = "[REDACTED]"
# Shorter values are placeholders (e.g. "ollama"); replacing them would mangle ordinary words.
MIN_SECRET_CHARS = 8
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
# Names that match SECRET_NAME but hold no secret.
NOT_SECRET_NAME = re.compile(r"(_env$|^api_key_env$|_KEY_ENV$)", re.IGNORECASE)
# (pattern, replacement), valid for Python's ``re`` and for polars' regex engine alike.
KEY_SHAPES = (
    (r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{11,}", REDACTED),  # OpenAI, OpenRouter (sk-or-), Anthropic (sk-ant-)
    (r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*", f"Bearer {REDACTED}"),  # an Authorization header value
    (r"://[^/\s:@]+:[^/\s@]+@", f"://{REDACTED}@"),  # user:password in a URL
)
DOCUMENT_COLUMNS = ("settings_json", "config_json")  # table columns holding a config as JSON text


@dataclass(frozen=True)
class Redactor:
    """Replaces known secret values and key-shaped text by ``[REDACTED]``."""

    values: tuple[str, ...] = ()

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> Redactor:
        """Every secret-named variable's value (longest first, so no secret is half replaced)."""
        found = {
            value
            for name, value in environ.items()
            if SECRET_NAME.search(name)
            and not NOT_SECRET_NAME.search(name)
            and len(value) >= MIN_SECRET_CHARS
        }
        return cls(tuple(sorted(found, key=lambda v: (-len(v), v))))

    def text(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, REDACTED)
        for pattern, replacement in KEY_SHAPES:
            text = re.sub(pattern, replacement, text)
        return text

    def frame(self, frame: pl.DataFrame) -> pl.DataFrame:
        """``frame`` with every string column redacted (vectorised: fine on millions of rows), and
        the config columns (``DOCUMENT_COLUMNS``, one row per agent or cohort) read as documents."""
        texts = [name for name, dtype in frame.schema.items() if dtype == pl.String]
        documents = [name for name in texts if name in DOCUMENT_COLUMNS]
        if documents:
            frame = frame.with_columns(
                pl.col(name).map_elements(self._json_text, return_dtype=pl.String) for name in documents
            )
        return frame.with_columns(self._expr(pl.col(name)) for name in texts) if texts else frame

    def document(self, value: Any, key: str = "") -> Any:
        """A JSON-like value with secret-keyed values replaced and every string redacted."""
        if isinstance(value, Mapping) and key == "extra_headers":
            value = display_headers(value)
        elif isinstance(value, str) and key == "base_url":
            value = display_url(value)
        if isinstance(value, Mapping):
            return {k: self.document(v, str(k)) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.document(v, key) for v in value]
        if isinstance(value, str):
            secret_key = bool(SECRET_NAME.search(key)) and not NOT_SECRET_NAME.search(key)
            return REDACTED if secret_key and value else self.text(value)
        return value

    def _json_text(self, text: str) -> str:
        try:
            value = json.loads(text)
        except ValueError:
            return text  # not JSON: redacted as text, with the other columns
        return json.dumps(self.document(value))

    def _expr(self, column: pl.Expr) -> pl.Expr:
        for value in self.values:
            column = column.str.replace_all(value, REDACTED, literal=True)
        for pattern, replacement in KEY_SHAPES:
            column = column.str.replace_all(pattern, replacement)
        return column
