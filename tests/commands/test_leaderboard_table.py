"""The printed leaderboard in 80 columns (a pipe, a small terminal) and with ``--wide``.

A real cohort with long agent names (and one failed LLM) is replayed through ``arena replay``; its
end-of-run table and ``arena leaderboard`` are read at ``COLUMNS=80``.
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.commands.leaderboard_table import _with_interval
from tests.engine.helpers import synthetic_dataset
from tests.fakes.openai_server import FakeOpenAIServer, Reply

runner = CliRunner()
NAMES = ("favorite-longshot", "contrarian", "hold", "deaf-local-model")
NARROW = {"COLUMNS": "80"}


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(database URL, output of the replay at 80 columns) of a finished cohort."""
    tmp = tmp_path_factory.mktemp("narrow")
    dataset = synthetic_dataset(tmp / "data", markets=8, days=28)
    with FakeOpenAIServer() as server:
        server.responder = lambda request: Reply.ok("No JSON from me.")
        agents = "".join(
            f'[[agents]]\nname = "{name}"\nkind = "{kind}"\n'
            for name, kind in (
                ("favorite-longshot", "favorite"),
                ("contrarian", "contrarian"),
                ("hold", "hold"),
            )
        )
        agents += '[[agents]]\nname = "deaf-local-model"\nkind = "llm"\nmodel = "m"\n'
        agents += f'base_url = "{server.base_url}"\n'
        config = tmp / "c.toml"
        config.write_text(
            f'name = "narrow"\ndataset = "{dataset}"\nstart = 2025-01-01T00:00:00Z\nseed = 3\n'
            '[schedule]\nevery = "3d"\nrounds = 4\n[universe]\nmin_price = "0.01"\nmax_price = "0.99"\n'
            + agents,
            encoding="utf-8",
        )
        url = f"sqlite:///{tmp / 'a.db'}"
        result = runner.invoke(
            app, ["replay", str(config), "--allow-agent-failures", "--database-url", url], env=NARROW
        )
    assert result.exit_code == 0, result.output
    return url, result.output


def _leaderboard(output: str) -> list[str]:
    """The leaderboard's lines, title to caption (the failure warnings after it are one line each)."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "Leaderboard —" in line)
    end = next((i for i, line in enumerate(lines) if line.startswith("warning: agent")), len(lines))
    return lines[start:end]


def _table(output: str) -> list[str]:
    """The table's lines: from its title to the end of its rows (the caption follows)."""
    lines = _leaderboard(output)
    return lines[: next(i for i, line in enumerate(lines) if line.startswith("† baseline bot"))]


def _assert_fits_80_columns(output: str) -> None:
    table = _table(output)
    assert all(len(line) <= 80 for line in _leaderboard(output)), max(_leaderboard(output), key=len)
    assert not any("…" in line for line in table), "\n".join(table)  # no header or cell cut
    header = " ".join(" ".join(table[1:4]).split())
    for word in (
        "#",
        "Agent",
        "Return %",
        "95% CI",
        "Brier (bets)",
        "Stated",
        "imputed",
        "Tourn.",
        "take",
        "Status",
    ):
        assert word in header, header
    for name in NAMES:  # each name whole on one line, with its row's figures
        (row,) = [line for line in table if f" {name} " in f"{line} "]
        assert row.split()[0].isdigit() or row.split()[0] == "—", row
    (failed,) = [line for line in table if " deaf-local-model " in line]
    assert failed.split()[0] == "—" and failed.rstrip().endswith("FAILED")  # not ranked, status shown


def test_replay_prints_a_leaderboard_that_fits_80_columns(replayed: tuple[str, str]) -> None:
    _url, output = replayed
    _assert_fits_80_columns(output)
    assert "warning: agent deaf-local-model failed" in output


def test_leaderboard_fits_80_columns_and_wide_shows_every_column(replayed: tuple[str, str]) -> None:
    url, _output = replayed
    narrow = runner.invoke(app, ["leaderboard", "--database-url", url], env=NARROW)
    assert narrow.exit_code == 0, narrow.output
    _assert_fits_80_columns(narrow.output)
    assert "Value $" not in narrow.output and "--wide shows value, P/L" in narrow.output
    assert "Win" not in _table(narrow.output)[2]  # bets and win rate are --wide columns

    wide = runner.invoke(app, ["leaderboard", "--wide", "--database-url", url], env=NARROW)
    assert wide.exit_code == 0, wide.output
    table = _table(wide.output)
    header = " ".join(" ".join(table[1:4]).split())
    for word in ("Value $", "P/L $", "Stated", "imputed", "Tourn.", "Bets", "Win", "p vs #1", "Labels"):
        assert word in header, header
    assert not any("…" in line for line in table), "\n".join(table)  # wider than 80, never cut
    assert max(len(line) for line in table) > 80
    (failed,) = [line for line in table if " deaf-local-model " in line]
    assert "FAILED" in failed


@pytest.mark.parametrize(
    ("value", "lo", "hi", "shown"),
    [
        (-90.7, -100.0, -0.3, "-90.7\n[-100, +0]"),  # a bound that rounds to zero is +0, never -0
        (-0.04, -0.4, 0.2, "+0.0\n[+0, +0]"),
        (5.0, -2.6, 12.4, "+5.0\n[-3, +12]"),
    ],
)
def test_a_figure_that_rounds_to_zero_never_reads_minus_zero(
    value: float, lo: float, hi: float, shown: str
) -> None:
    assert _with_interval(value, lo, hi, "{:+.1f}", "{:+.0f}") == shown
