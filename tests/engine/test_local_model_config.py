"""``data/configs/replay-local-model.toml`` (docs/local-models.md) runs end to end against a local
OpenAI-compatible server: the fake one on loopback, standing where Ollama would."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from arena.cli import app
from tests.fakes.openai_server import FakeOpenAIServer, Reply

CONFIG = Path(__file__).resolve().parents[2] / "data" / "configs" / "replay-local-model.toml"
HOLD = json.dumps({"reasoning": "Nothing is mispriced enough.", "actions": [], "probabilities": {}})


def test_the_local_model_config_replays_against_a_local_server(tmp_path: Path) -> None:
    text = CONFIG.read_text(encoding="utf-8")
    llm = tomllib.loads(text)["agents"][0]
    assert llm["base_url"] == "http://localhost:11434/v1"  # the documented Ollama address
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok(HOLD)
        config = tmp_path / "local.toml"
        config.write_text(text.replace(llm["base_url"], server.base_url), encoding="utf-8")
        result = CliRunner().invoke(
            app,
            ["replay", str(config), "--database-url", f"sqlite:///{tmp_path / 'a.db'}"],
            env={"COLUMNS": "80"},
        )
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 4  # one call per round, 4 rounds, every answer valid
    first = server.requests[0]
    assert first.path == "/v1/chat/completions" and "authorization" not in first.headers  # no key
    assert first.body["model"] == "llama3.1:8b" and first.body["response_format"] == {"type": "json_object"}
    assert "local-model" in result.output and "completed" in result.output
