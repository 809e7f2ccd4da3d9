"""Every ``--help`` screen reads cleanly: flags without a ``<bool>`` tag, value options typed."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena.cli import app
from tests.commands.cli_tree import groups, leaves

runner = CliRunner()
COMMANDS = [*groups(), *(name for name, _ in leaves())]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda name: name or "arena")
def test_help_shows_no_bool_tags(command: str) -> None:
    result = runner.invoke(app, [*command.split(), "--help"], env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "--help" in result.output and "Show this message and exit." in result.output
    assert "<bool>" not in result.output, result.output


def test_value_options_keep_their_type_and_flags_stand_bare() -> None:
    result = runner.invoke(app, ["demo", "--help"], env={"COLUMNS": "120"})
    lines = {line.split()[1]: line for line in result.output.splitlines() if line.startswith("│ --")}
    assert "<str>" in lines["--model"]  # a value option still says what it takes
    assert lines["--fresh"].split()[2] == "Start"  # the flag's help follows its name directly


def test_the_knowledge_cutoff_help_states_the_close_date_rule() -> None:
    # the guard (arena.cohorts.leakage.allowed) keeps a market only if the cutoff day K is before
    # its close date: a market closing on K is left out, whenever it resolved
    result = runner.invoke(app, ["demo", "--help"], env={"COLUMNS": "200"})
    text = " ".join(result.output.replace("│", " ").split())
    assert "markets closing on or before that day" in text
    assert "resolved before" not in text
