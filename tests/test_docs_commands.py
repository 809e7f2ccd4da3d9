"""Every ``arena ...`` command line shown in README.md and docs/ parses against the real CLI.

A line in a fenced code block that starts with ``arena`` (after an optional ``$`` prompt and
``NAME=value`` environment assignments) names a command path and options. Its command must
exist (``--help`` of that path exits 0) and every option on the line must be one of that
command's options, so the manual cannot drift from the CLI.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from arena.cli import app, load

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PREFIX = re.compile(r"^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(arena(?:\s.*)?)$")
SHELL_BREAKS = {"|", "||", ">", ">>", "<", "&&", ";", "&", "2>&1"}
runner = CliRunner()


def command_lines(text: str) -> list[str]:
    """The ``arena ...`` lines of the fenced code blocks, comments and shell plumbing cut off."""
    found, fence = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif fence and (m := PREFIX.match(line.strip())):
            tokens = shlex.split(m.group(1), comments=True)
            cut = next((i for i, t in enumerate(tokens) if t in SHELL_BREAKS), len(tokens))
            found.append(shlex.join(tokens[:cut]))
    return found


def _lines() -> list[tuple[str, str]]:
    return [(page.name, line) for page in PAGES for line in command_lines(page.read_text(encoding="utf-8"))]


def _resolve(words: list[str]) -> tuple[list[str], Any, list[str]]:
    """(command path, its click command, the words after the path)."""
    command, path = typer.main.get_command(app), []
    while words and hasattr(command, "commands") and words[0] in command.commands:
        path.append(words[0])
        name = words.pop(0)
        # The root lists its commands by name only (``arena.cli``): load the one named for real.
        command = load(name) if len(path) == 1 else command.commands[name]
    return path, command, words


def _options(command: Any) -> set[str]:
    names = {"--help"}
    for param in command.params:
        names.update(getattr(param, "opts", ()), getattr(param, "secondary_opts", ()))
    return {name for name in names if name.startswith("-")}


LINES = _lines()


def test_the_docs_show_commands() -> None:
    pages = {page for page, _ in LINES}
    assert len(LINES) > 30 and {"README.md", "scoring.md", "cohorts.md"} <= pages, LINES


@pytest.mark.parametrize(("page", "line"), LINES, ids=[f"{p}: {line}" for p, line in LINES])
def test_a_documented_command_line_parses(page: str, line: str) -> None:
    path, command, rest = _resolve(shlex.split(line)[1:])
    words = [w.strip("[]") for w in rest]
    if hasattr(command, "commands"):  # a group: only options may follow, never an unknown subcommand
        assert all(w.startswith("-") for w in words), f"{page}: {line!r}: no command {words[0]!r}"
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, f"{page}: {line!r}: {result.output}"
    named = {w.split("=", 1)[0] for w in words if re.match(r"--?[A-Za-z]", w)}
    unknown = sorted(named - _options(command))
    assert unknown == [], f"{page}: {line!r}: `arena {' '.join(path)}` has no option {unknown}"


def test_the_parser_reads_prompts_environments_comments_and_pipes() -> None:
    text = "\n".join(
        [
            "arena outside a fence",
            "```bash",
            "$ ARENA_HOME=/tmp/x ARENA_SKIP_POSTGRES=1 arena serve   # a comment",
            "arena leaderboard --json > out.json",
            "arena cohort pause ID | resume ID",
            "arenas are not commands",
            "```",
        ]
    )
    assert command_lines(text) == ["arena serve", "arena leaderboard --json", "arena cohort pause ID"]
    path, _command, rest = _resolve(["cohort", "nonsense", "--x"])
    assert (path, rest) == (["cohort"], ["nonsense", "--x"])
