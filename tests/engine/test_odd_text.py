"""Agent text that no column can hold as is (NUL, lone surrogates) is recorded, not a failed round."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from tests.engine.helpers import config, replay, stored_decisions, tiny_dataset

SPELLED = "nul \\x00, lone \\ud800 and \\udfff"  # OddTextBettor.ODD with those characters escaped


def test_nul_and_lone_surrogates_are_stored_spelled_as_escapes(engine: Engine, tmp_path: Path) -> None:
    odd = {"name": "odd", "kind": "plugin", "path": "tests.engine.bots:OddTextBettor"}
    data = config(tiny_dataset(tmp_path / "data"), [odd, {"name": "fav", "kind": "favorite"}])
    data["schedule"] = {"every": "7d", "rounds": 1}
    result, _ = replay(engine, data)
    (report,) = result.rounds
    assert report.statuses == {"odd": "rejected", "fav": "done"}
    row = next(d for d in stored_decisions(engine) if d.reasoning is not None)
    assert row.reasoning == row.raw_response == SPELLED
    assert row.actions_json == [{"type": "bet", "market_id": SPELLED, "outcome": "YES\\x00", "amount": "10"}]
    assert row.probabilities_json == {SPELLED: {"YES\\ud800": 0.5}}
    assert row.error is not None and "\x00" not in row.error


def test_a_sloppy_plug_in_is_recorded_too(engine: Engine, tmp_path: Path) -> None:
    bot = {"kind": "plugin", "path": "tests.engine.bots:SloppyBettor"}
    agents = [{"name": "odd", **bot}, {"name": "ints", **bot, "settings": {"mode": "int-ids"}}]
    data = config(tiny_dataset(tmp_path / "data"), agents)
    data["schedule"] = {"every": "7d", "rounds": 1}
    result, _ = replay(engine, data)
    assert result.rounds[0].statuses == {"odd": "error", "ints": "rejected"}
    by_error = {d.error_kind: d for d in stored_decisions(engine)}
    odd = by_error["bad\\x00kind"]
    assert (odd.error, odd.prompt_hash, odd.prompt_version) == ("boom", "h\\ud800", "v\\x00")
    ints = by_error["invalid_actions"]
    assert ints.actions_json == [{"type": "bet", "market_id": "123", "outcome": "YES", "amount": "10"}]
    assert ints.probabilities_json == {"123": {"YES": 0.5}}
