"""No control code written by others reaches the terminal raw, through any command.

``HOSTILE`` holds an OSC 0 title change, an OSC 52 clipboard write, a clear-screen, a CR that
would overwrite the line, a C1 CSI and a bidi override. It is planted in every place others
write: cohort, agent and model names, market questions and categories, a dataset's name, an
agent's error, a provider's error body (over the real wire, from a loopback server), a job's
failure. Each command's bytes must hold none of it raw, and show it spelt out (``\\x1b``).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
import typer
from rich.progress import Progress
from rich.table import Table
from sqlalchemy import text
from typer.testing import CliRunner

from arena.cli import app
from arena.commands.options import fail
from arena.commands.terminal import plain_console
from arena.db.engine import make_engine
from markets.replay import DatasetInfo, write_dataset
from markets.types import Market, PriceSnapshot, Venue
from tests.engine.helpers import tiny_dataset
from tests.fakes.openai_server import FakeOpenAIServer, Reply
from tests.scoring.stored import populated_database

HOSTILE = "\x1b]0;owned\x07\x1b]52;c;aGVsbG8=\x07\x1b[2J\x1b[H\rfake\x9b31m\u202ereversed"
RAW = ("\x1b]", "\x1b[2J", "\x07", "\r", "\x9b", "\u202e")
SPELT = "\\x1b]0;owned\\x07"


def _inert(output: str, *, shown: bool = True) -> None:
    """No planted code in ``output`` raw; ``shown``: the planted text is there, spelt out."""
    raw = [r for r in RAW if r in output]
    assert not raw, f"raw control codes {raw!r} in: {output[:400]!r}"
    assert not shown or SPELT in output.replace("\n", "").replace(" ", ""), output[-2000:]


def _arena(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "400"})
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = populated_database(tmp_path_factory.mktemp("hostile"))
    engine = make_engine(url)
    closed = datetime(2025, 3, 2, tzinfo=UTC)
    with engine.begin() as connection:
        for statement in (
            "UPDATE cohort SET name = :h",
            "UPDATE agent SET name = 'x' || :h || id",
            "UPDATE agent SET model_id = :h",
            "UPDATE market SET question = :h, category = :h, close_time = :closed",
            "UPDATE decision SET error = :h, error_kind = 'provider' WHERE error IS NOT NULL",
            "UPDATE position SET status = 'open'",  # held past the close, unresolved: pending
            "DELETE FROM resolution",
        ):
            connection.execute(text(statement), {"h": HOSTILE, "closed": closed})
    engine.dispose()
    return url


@pytest.mark.parametrize(
    "args",
    [
        ("cohort", "list"),
        ("leaderboard", "--cohort", "c1", "--replicates", "20", "--wide"),
        ("markets", "pending"),
    ],
    ids=" ".join,
)
def test_stored_text_is_shown_not_sent(hostile_db: str, args: tuple[str, ...]) -> None:
    _inert(_arena(*args, "--database-url", hostile_db))


def test_a_dataset_is_shown_not_sent(tmp_path: Path) -> None:
    at = datetime(2025, 1, 1, tzinfo=UTC)
    market = Market(Venue.MANIFOLD, "m", HOSTILE, category=HOSTILE, close_time=at + timedelta(days=9))
    prices = [PriceSnapshot(market.market_id, {"YES": Decimal("0.5"), "NO": Decimal("0.5")}, at, "t")]
    info = DatasetInfo(name=HOSTILE, version="1", source=HOSTILE, license="CC0", created_with="t")
    write_dataset(tmp_path / "d", markets=[market], prices=prices, resolutions=[], info=info)
    _inert(_arena("data", "info", str(tmp_path / "d")))


def test_a_providers_error_body_and_a_model_name_are_shown_not_sent(tmp_path: Path) -> None:
    """The real ``arena replay`` (progress, failure warnings, leaderboard), then ``cohort show``."""
    dataset = tiny_dataset(tmp_path / "data")
    model = json.dumps(f"model {HOSTILE}")  # a TOML basic string: the same escapes as JSON's
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.error(400, f"bad request {HOSTILE}")
        config = tmp_path / "c.toml"
        config.write_text(
            f'name = "c"\ndataset = "{dataset}"\nstart = 2025-01-01T00:00:00Z\n'
            '[schedule]\nevery = "7d"\nrounds = 2\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
            f'[[agents]]\nname = "llm"\nkind = "llm"\nmodel = {model}\nbase_url = "{server.base_url}"\n'
            "transport_retries = 0\n",
            encoding="utf-8",
        )
        url = f"sqlite:///{tmp_path / 'a.db'}"
        # A real process: what it logs goes to its stderr as it would in a terminal.
        replayed = subprocess.run(
            [sys.executable, "-m", "arena.cli", "replay", str(config), "--database-url", url],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "200"},
            check=False,
        )
    _inert(replayed.stdout, shown=False)
    _inert(replayed.stderr)  # the failed rounds are logged, quoting the provider's error
    assert replayed.returncode == 1 and "every agent failed in round(s) 0, 1" in replayed.stderr
    _inert(_arena("cohort", "list", "--database-url", url), shown=False)
    (cohort_id,) = [c["id"] for c in json.loads(_arena("cohort", "list", "--json", "--database-url", url))]
    _inert(_arena("cohort", "show", cohort_id, "--database-url", url))


def test_a_jobs_failure_is_shown_not_sent(hostile_db: str) -> None:
    engine = make_engine(hostile_db)
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO job_run (job, started_at, finished_at, ok, message, recorded_at) "
                "VALUES ('sync', :t, :t, false, :h, :t)"
            ),
            {"t": datetime(2025, 3, 1, tzinfo=UTC), "h": HOSTILE},
        )
    engine.dispose()
    _inert(_arena("status", "--database-url", hostile_db))


def test_on_a_real_terminal_only_richs_own_codes_are_sent() -> None:
    """With colours and a live progress bar (as in a terminal), rich's styling and cursor codes
    still go out, and the planted ones still do not."""
    sink = io.StringIO()
    console = plain_console(file=sink, force_terminal=True, color_system="truecolor", width=200)
    table = Table("name", title=HOSTILE)
    table.add_row(f"[bold]{HOSTILE}")
    console.print(table)
    console.print(f"[red]error:[/] {HOSTILE}")
    with Progress(console=console) as progress:
        task = progress.add_task(HOSTILE, total=2)
        progress.advance(task)
    output = sink.getvalue()
    assert "\x1b[1m" in output or "\x1b[31m" in output  # rich's own styles are there
    for raw in ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\u202e"):
        assert raw not in output, raw
    assert SPELT in output


def test_an_error_line_is_one_line_and_shows_what_it_quotes() -> None:
    """``fail``: the one-line error path every command uses (here quoting a name as written)."""
    probe = typer.Typer()

    @probe.command()
    def refuse() -> None:
        fail(f"no agent named {HOSTILE}\nsecond line")

    result = CliRunner().invoke(probe, [])
    assert result.exit_code == 2 and result.stdout == ""
    _inert(result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.endswith("reversed\\nsecond line\n")
