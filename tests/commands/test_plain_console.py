"""The CLI prints names as written: rich neither reads ``[...]`` as markup nor ``:name:`` as an emoji.

Agent and cohort names (and market questions, model errors) are text written by others; here they
hold a markup tag and an emoji code, and ``arena leaderboard`` and ``arena cohort list`` must show
both literally (``arena.commands.terminal``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape
from sqlalchemy import text
from typer.testing import CliRunner

from arena.cli import app
from arena.db.engine import make_engine
from tests.scoring.stored import populated_database

NAME = "fire :fire: [bold]x[/bold]"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = populated_database(tmp_path_factory.mktemp("plain"))
    engine = make_engine(url)
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE agent SET name = :name WHERE cohort_id = 'c1' AND name = 'hold'"), {"name": NAME}
        )
        connection.execute(text("UPDATE cohort SET name = :name WHERE id = 'c1'"), {"name": NAME})
    engine.dispose()
    return url


def _shows_literally(output: str) -> None:
    assert ":fire:" in output and "[bold]x[/bold]" in output
    assert "\N{FIRE}" not in output


@pytest.mark.parametrize(
    "args",
    [("leaderboard", "--cohort", "c1", "--replicates", "20"), ("cohort", "list")],
    ids=["leaderboard", "cohort-list"],
)
def test_a_name_is_printed_as_written(url: str, args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*args, "--database-url", url], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    _shows_literally(result.output)


def test_rich_alone_would_have_drawn_the_emoji(tmp_path: Path) -> None:
    """The control: a default rich console turns the same name into an emoji."""
    path = tmp_path / "out.txt"
    with path.open("w", encoding="utf-8") as file:
        Console(file=file, width=200).print(escape(NAME))
    assert "\N{FIRE}" in path.read_text(encoding="utf-8")
