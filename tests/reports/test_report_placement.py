"""``arena report --out DIR --force`` replaces only a previous report, never anything else.

Each refusal is one line on stderr with exit status 2, and every file that was there stays,
byte for byte; no partial folder or zip is left next to DIR.
"""

from __future__ import annotations

import errno
import zipfile
from pathlib import Path

import pytest
import typer
from sqlalchemy import Engine
from typer.testing import CliRunner

from arena.commands import report
from arena.reports import bundle
from tests.dashboard.world import LIVE, REPLAY

pytestmark = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def _app() -> typer.Typer:
    app = typer.Typer()
    report.register(app)
    app.command("noop")(lambda: None)
    return app


def _report(world: Engine, out: Path, *options: str, cohort: str = REPLAY) -> tuple[int, str, str]:
    url = world.url.render_as_string(hide_password=False)
    args = ["report", cohort, "--out", str(out), "--no-prompts", "--database-url", url, *options]
    result = CliRunner().invoke(_app(), args)
    return result.exit_code, result.stdout, result.stderr


def _snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by relative path; the database's own files (which SQLite
    keeps changing) by name only."""
    return {
        p.relative_to(folder).as_posix(): b"" if p.name.startswith("arena.db") else p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file()
    }


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("arena.db"))


def _refused(code: int, out: str, err: str, reason: str) -> None:
    assert code == 2, out + err
    assert err.count("\n") == 1 and err.startswith("error: refusing to replace ") and reason in err, err
    assert out == ""


def _no_partials(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


def test_force_keeps_a_folder_that_is_not_a_report(world: Engine, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "keep.txt").write_text("precious")

    _refused(*_report(world, out, "--force"), "it is not a report written by the arena")
    assert _snapshot(out) == {"keep.txt": b"precious"}
    _no_partials(tmp_path)


def test_force_keeps_a_previous_report_that_holds_other_files(world: Engine, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert _report(world, out)[0] == 0
    (out / "tables" / "notes.txt").write_text("mine")
    before = _snapshot(out)

    _refused(
        *_report(world, out, "--force"), "it holds files the arena did not write there ('tables/notes.txt')"
    )
    assert _snapshot(out) == before


def test_force_replaces_a_previous_report_and_its_zip(world: Engine, tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert _report(world, out)[0] == 0
    code, stdout, stderr = _report(world, out, "--force", cohort=LIVE)

    assert code == 0, stdout + stderr
    assert "Live now" in (out / "report.md").read_text()
    with zipfile.ZipFile(tmp_path / "r.zip") as archive:
        assert "Live now" in archive.read("r/report.md").decode()
    assert _names(tmp_path) == ["r", "r.zip"]  # nothing set aside or left half-written


@pytest.mark.parametrize("where", ["working folder", "root"])
def test_force_never_replaces_the_working_folder_or_root(
    world: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    work = tmp_path / "work"
    assert _report(world, work)[0] == 0  # even a report folder, while someone works inside it
    monkeypatch.chdir(work)
    before = _snapshot(work)
    out = Path("/") if where == "root" else Path(".")

    _refused(
        *_report(world, out, "--force"),
        f"it {'is the root folder' if where == 'root' else 'holds the working folder'}",
    )
    assert _snapshot(work) == before


def test_force_never_replaces_the_folder_holding_the_database(world: Engine, tmp_path: Path) -> None:
    database = Path(str(world.url.database))
    assert database.parent == tmp_path
    before = _snapshot(tmp_path)

    _refused(*_report(world, tmp_path, "--force"), f"it holds {database}")
    assert _snapshot(tmp_path) == before


def test_an_existing_zip_is_not_overwritten_without_force(world: Engine, tmp_path: Path) -> None:
    (tmp_path / "r.zip").write_bytes(b"someone else's zip")
    code, _, stderr = _report(world, tmp_path / "r")

    assert code == 2 and stderr.count("\n") == 1 and "r.zip already exists" in stderr
    assert (tmp_path / "r.zip").read_bytes() == b"someone else's zip"
    assert not (tmp_path / "r").exists()
    _no_partials(tmp_path)


def test_force_keeps_a_zip_that_is_not_this_reports_own(world: Engine, tmp_path: Path) -> None:
    assert _report(world, tmp_path / "other")[0] == 0
    (tmp_path / "other.zip").rename(tmp_path / "r.zip")  # a report zip, but of another folder
    before = (tmp_path / "r.zip").read_bytes()

    _refused(*_report(world, tmp_path / "r", "--force"), "it is not a report zip written by the arena")
    assert (tmp_path / "r.zip").read_bytes() == before
    assert not (tmp_path / "r").exists()


def test_a_folder_named_like_the_zip_is_one_line(world: Engine, tmp_path: Path) -> None:
    (tmp_path / "r.zip").mkdir()
    (tmp_path / "r.zip" / "inside.txt").write_text("x")

    _refused(*_report(world, tmp_path / "r", "--force"), "it is a folder, not a report zip")
    assert _snapshot(tmp_path / "r.zip") == {"inside.txt": b"x"}
    assert not (tmp_path / "r").exists()
    _no_partials(tmp_path)


def test_a_full_disk_while_zipping_leaves_nothing_behind(
    world: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC is raised at the zip's write call (a real full disk needs a mount this test
    cannot make); the folder is not placed either, since the zip is made before it moves."""

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bundle.shutil, "copyfileobj", full)
    code, stdout, stderr = _report(world, tmp_path / "r")

    assert code == 1, stdout + stderr
    assert stderr.count("\n") == 1 and "No space left on device" in stderr
    assert _names(tmp_path) == []
