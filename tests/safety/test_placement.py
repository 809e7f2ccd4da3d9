"""Every command that writes a path replaces only what the arena wrote there (``markets.placement``).

The report's own cases are in ``tests/reports/test_report_placement.py``; here the shared rule
itself, and the dataset and corpus-file writers that use it.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from typer.testing import CliRunner

from arena.cli import app
from arena.commands import demo
from arena.db.migrate import upgrade
from markets import placement
from markets.placement import PlacementRefused, staged_file, staged_folder
from markets.replay import load_dataset
from tests.markets.test_replay_import import make_raw

LISTED = frozenset({"a.txt", "sub/b.txt"})
STRANGERS = "it holds files the arena did not write there"
ALREADY = "already exists; choose another path, or pass --force to replace the"


def _record(folder: Path) -> frozenset[str] | None:
    return LISTED if (folder / "a.txt").is_file() else None


def _write(staging: Path) -> None:
    (staging / "sub").mkdir()
    (staging / "a.txt").write_text("new a")
    (staging / "sub" / "b.txt").write_text("new b")


def _place(target: Path, *, replace: bool = True) -> None:
    with staged_folder(target, "thing", replace=replace, record=_record) as staging:
        _write(staging)


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_folder_written_before_is_replaced_file_by_file(tmp_path: Path) -> None:
    _place(tmp_path / "out")
    (tmp_path / "out" / "a.txt").write_text("old a")
    _place(tmp_path / "out")
    assert _tree(tmp_path / "out") == {"a.txt": b"new a", "sub/b.txt": b"new b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def _stranger(folder: Path) -> None:
    (folder / "keep.txt").write_text("k")


def _listed_and_stranger(folder: Path) -> None:
    (folder / "a.txt").write_text("a")
    _stranger(folder)


def _link_to_a_folder(folder: Path) -> None:
    (folder / "a.txt").write_text("a")
    (folder / "sub").symlink_to("/etc")


def _link_named_as_listed(folder: Path) -> None:
    (folder / "a.txt").symlink_to("/etc/hostname")


@pytest.mark.parametrize(
    ("plant", "reason"),
    [
        (_stranger, "it is not a thing written by the arena"),
        (_listed_and_stranger, "it holds files the arena did not write there ('keep.txt')"),
        (_link_to_a_folder, "it holds files the arena did not write there ('sub')"),
        (_link_named_as_listed, "it holds files the arena did not write there ('a.txt')"),
    ],
)
def test_anything_else_is_refused_and_kept(
    tmp_path: Path, plant: Callable[[Path], None], reason: str
) -> None:
    target = tmp_path / "out"
    target.mkdir()
    plant(target)
    before = sorted(os.listdir(target))
    with pytest.raises(PlacementRefused, match=re.escape(reason)):
        _place(target)
    assert sorted(os.listdir(target)) == before and os.path.exists("/etc/hostname")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_link_at_the_target_is_refused_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    _place(real)
    (tmp_path / "out").symlink_to(real)
    with pytest.raises(PlacementRefused, match="it is a symbolic link"):
        _place(tmp_path / "out")
    assert (tmp_path / "out").is_symlink() and _tree(real) == {"a.txt": b"new a", "sub/b.txt": b"new b"}


def test_a_record_naming_files_outside_deletes_nothing_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    _place(tmp_path / "out")
    monkeypatch.setattr("tests.safety.test_placement.LISTED", LISTED | {"../outside.txt"})
    _place(tmp_path / "out")
    assert outside.read_text() == "keep"


def _place_on_a_full_disk(target: Path) -> None:
    with staged_folder(target, "thing", replace=True, record=_record) as staging:
        (staging / "a.txt").write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")


def test_a_failure_removes_the_partial_copy_and_keeps_the_old(tmp_path: Path) -> None:
    _place(tmp_path / "out")
    with pytest.raises(OSError, match="No space"):
        _place_on_a_full_disk(tmp_path / "out")
    assert _tree(tmp_path / "out") == {"a.txt": b"new a", "sub/b.txt": b"new b"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_file_is_replaced_only_when_it_is_the_arenas(tmp_path: Path) -> None:
    target = tmp_path / "t.txt"
    target.write_text("mine")
    for replace in (False, True):
        with (
            pytest.raises(PlacementRefused),
            staged_file(
                target, "thing", replace=replace, record=lambda p: p.read_text() == "arena"
            ) as partial,
        ):
            partial.write_text("arena")
    assert target.read_text() == "mine"
    target.write_text("arena")
    with staged_file(target, "thing", replace=True, record=lambda p: p.read_text() == "arena") as partial:
        partial.write_text("arena, again")
    assert target.read_text() == "arena, again"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_only_a_few_strangers_are_named(tmp_path: Path) -> None:
    target = tmp_path / "out"
    _place(target)
    for i in range(50):
        (target / f"x{i:02}").write_text("")
    with pytest.raises(PlacementRefused) as refused:
        _place(target)
    assert str(refused.value).count("'x") == placement.SHOWN_STRANGERS and str(refused.value).endswith(", …)")


# The commands that write datasets and corpus files follow the rule, in one line and exit 2.


def _arena(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr


def test_import_force_keeps_a_dataset_folder_that_holds_other_files(tmp_path: Path) -> None:
    raw, out = make_raw(tmp_path / "raw"), tmp_path / "ds"
    command = ["data", "import-forecastbench", str(raw), "--out", str(out), "--min-points", "3"]
    assert _arena(*command)[0] == 0
    listed = json.loads((out / "dataset.json").read_text())["files"]
    assert listed == sorted(
        [
            "LICENSE",
            "SOURCE.md",
            "dataset.json",
            "markets.csv",
            "orig/LICENSE",
            "orig/README.md",
            "prices.csv",
        ]
    )
    (out / "corpus.jsonl").write_text("{}\n")  # added later, e.g. by `arena corpus build-market-texts`

    code, err = _arena(*command, "--force")
    assert code == 2 and err.count("\n") == 1
    assert err == f"error: refusing to replace {out}: {STRANGERS} ('corpus.jsonl')\n"
    assert (out / "corpus.jsonl").read_text() == "{}\n"
    load_dataset(out)


def test_import_refuses_a_link_in_the_raw_folder(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    secret = tmp_path / "secret"
    secret.write_text("not for publishing")
    (raw / "orig" / "LICENSE").unlink()
    (raw / "orig" / "LICENSE").symlink_to(secret)

    code, err = _arena(
        "data", "import-forecastbench", str(raw), "--out", str(tmp_path / "ds"), "--min-points", "3"
    )
    assert code == 2 and err.count("\n") == 1
    assert err == f"error: {raw}/orig/LICENSE is a symbolic link; put the file itself in the raw folder\n"
    assert not (tmp_path / "ds").exists()


def test_market_texts_replace_only_a_market_texts_file(tmp_path: Path) -> None:
    raw = make_raw(tmp_path / "raw")
    assert (
        _arena("data", "import-forecastbench", str(raw), "--out", str(tmp_path / "ds"), "--min-points", "3")[
            0
        ]
        == 0
    )
    mine = tmp_path / "news.jsonl"
    mine.write_text('{"id": "1", "published_at": "2024-01-01T00:00:00Z", "title": "t", "text": "x"}\n')
    build = ["corpus", "build-market-texts", str(tmp_path / "ds"), "--out", str(mine)]

    assert _arena(*build) == (
        2,
        f"error: {mine} {ALREADY} market-texts corpus file the arena wrote there\n",
    )
    code, err = _arena(*build, "--force")
    assert (
        code == 2
        and err
        == f"error: refusing to replace {mine}: it is not a market-texts corpus file written by the arena\n"
    )
    assert '"title": "t"' in mine.read_text()

    texts = tmp_path / "texts.jsonl"
    assert _arena(*build[:-1], str(texts))[0] == 0
    assert _arena(*build[:-1], str(texts), "--force")[0] == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "news.jsonl", "raw", "texts.jsonl"]


@pytest.mark.parametrize("content", [b"my notes\n", None], ids=["text-file", "other-sqlite-db"])
def test_demo_fresh_deletes_only_an_arena_database(tmp_path: Path, content: bytes | None) -> None:
    notes = tmp_path / "notes.db"
    if content is None:
        with closing(sqlite3.connect(notes)) as connection:
            connection.execute("CREATE TABLE mine (x)")
            connection.commit()
    else:
        notes.write_bytes(content)
    before = notes.read_bytes()

    code, err = _arena("demo", "--fresh", "--no-report", "--database-url", f"sqlite:///{notes}")
    assert code == 2 and err == (
        f"error: --fresh deletes only an arena database, and {notes} is not one; nothing was deleted\n"
    )
    assert notes.read_bytes() == before


def test_demo_fresh_deletes_an_arena_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    upgrade(url)
    demo._remove_sqlite(url)
    assert list(tmp_path.iterdir()) == []
