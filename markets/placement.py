"""Put a finished output (a folder or a file) at the path a user named, never destroying anything else.

Every command that writes a path (``arena report``, ``arena data import-*``, ``arena markets
record``, ``arena corpus build-market-texts``) goes through here, so one rule holds for all:

- The output is written in a hidden temporary sibling (``.NAME.…partial``) and moved into place
  with a rename at the very end; a failure (an error, a full disk, Ctrl-C) removes the partial
  copy and leaves the path as it was.
- An existing path is replaced only with ``replace`` (``--force``), and only when it is what the
  arena itself wrote there before, proved by its own record: a report's ``manifest.json``, a
  dataset's ``dataset.json``. A folder is replaced only if every file in it is one that record
  lists, and the old copy is then deleted file by file from that list (never a recursive delete
  of whatever is there): a file the user added, a link, the working folder, ``/`` or a folder
  holding a path to ``keep`` (the database being read) is refused with one line, and nothing is
  touched.

This module lives in ``markets`` because that is the lowest package that writes files (replay
datasets); ``arena`` uses it for everything else.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

FolderRecord = Callable[[Path], Collection[str] | None]
"""The files (relative POSIX paths) the arena recorded writing in a folder; None: no such record."""
FileRecord = Callable[[Path], bool]
"""Whether a file is one the arena wrote (e.g. a report's own zip)."""

SHOWN_STRANGERS = 3  # files named in a refusal; the rest are counted


class PlacementRefused(ValueError):
    """A path the arena will not write or replace, with a one-line reason."""


def check_folder(
    path: Path, what: str, *, replace: bool, record: FolderRecord, keep: Sequence[Path] = ()
) -> Path:
    """The absolute ``path`` if a new ``what`` folder may be placed there, else ``PlacementRefused``.

    Allowed: nothing there, an empty folder, or (with ``replace``) a folder holding only files
    that ``record`` says the arena wrote there."""
    target = _absolute(path)
    if not _exists(target):
        return target
    _check_not_precious(target, keep)
    if not target.is_dir():
        raise PlacementRefused(f"refusing to replace {target}: it is a file, not a {what} folder")
    if not any(target.iterdir()):
        return target
    if not replace:
        raise _already_there(target, what)
    owned = record(target)
    if owned is None:
        raise PlacementRefused(f"refusing to replace {target}: it is not a {what} written by the arena")
    strangers = _strangers(target, frozenset(owned))
    if strangers:
        raise PlacementRefused(
            f"refusing to replace {target}: it holds files the arena did not write there ({strangers})"
        )
    return target


def check_file(
    path: Path, what: str, *, replace: bool, record: FileRecord, keep: Sequence[Path] = ()
) -> Path:
    """The absolute ``path`` if a new ``what`` file may be placed there, else ``PlacementRefused``.

    Allowed: nothing there, or (with ``replace``) a file that ``record`` says the arena wrote."""
    target = _absolute(path)
    if not _exists(target):
        return target
    _check_not_precious(target, keep)
    if target.is_dir():
        raise PlacementRefused(f"refusing to replace {target}: it is a folder, not a {what}")
    if not replace:
        raise _already_there(target, what)
    if not record(target):
        raise PlacementRefused(f"refusing to replace {target}: it is not a {what} written by the arena")
    return target


@contextmanager
def staged_folder(
    path: Path, what: str, *, replace: bool, record: FolderRecord, keep: Sequence[Path] = ()
) -> Iterator[Path]:
    """A new empty hidden sibling folder to write the ``what`` in; when the block ends without an
    error it is checked again (``check_folder``) and moved to ``path``, else it is removed."""
    target = check_folder(path, what, replace=replace, record=record, keep=keep)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        staging.chmod(0o755)  # mkdtemp makes it private; reports and datasets are meant to be shared
        yield staging
        check_folder(target, what, replace=replace, record=record, keep=keep)  # what is there now
        _swap_in(staging, target, record)
    finally:
        shutil.rmtree(staging, ignore_errors=True)  # ours alone; gone already once moved into place


@contextmanager
def staged_file(
    path: Path, what: str, *, replace: bool, record: FileRecord, keep: Sequence[Path] = ()
) -> Iterator[Path]:
    """A hidden sibling path to write the ``what`` file at; when the block ends without an error it
    is checked again (``check_file``) and renamed to ``path``; on any failure it is removed."""
    target = check_file(path, what, replace=replace, record=record, keep=keep)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial-{secrets.token_hex(4)}")
    try:
        yield partial
        check_file(target, what, replace=replace, record=record, keep=keep)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)


def _swap_in(staging: Path, target: Path, record: FolderRecord) -> None:
    """Rename ``staging`` to ``target``; an old folder there (checked: only the arena's files) is
    set aside first and then deleted by its own record, file by file."""
    if not _exists(target) or not any(target.iterdir()):
        os.replace(staging, target)  # an empty folder is replaced by the rename itself
        return
    owned = frozenset(record(target) or ())
    retired = target.with_name(f".{target.name}.old-{secrets.token_hex(4)}")
    os.rename(target, retired)
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(retired, target)
        raise
    _delete_listed(retired, owned)


def _delete_listed(folder: Path, owned: frozenset[str]) -> None:
    """Delete the regular files of ``folder`` that ``owned`` lists, then its folders left empty.
    Anything else (a file that arrived after the check) stays, and so does the folder holding it."""
    root = Path(os.path.realpath(folder))
    for name in sorted(owned):
        candidate = folder / name
        # A record naming '../x', or a path through a link, never reaches outside the folder.
        inside = _inside(Path(os.path.realpath(candidate)), root)
        if inside and candidate.is_file() and not candidate.is_symlink():
            candidate.unlink()
    for directory, _subdirs, _files in sorted(os.walk(folder), key=lambda w: -len(w[0])):
        with suppress(OSError):  # not empty: it holds something the record did not list
            os.rmdir(directory)


def _strangers(folder: Path, owned: frozenset[str]) -> str:
    """The entries of ``folder`` that ``owned`` does not list, or links (the arena writes none):
    a few names and a count, '' when there are none. Stops looking after a few."""
    found: list[str] = []
    for directory, subdirs, files in os.walk(folder):
        here = Path(directory)
        links = [d for d in subdirs if (here / d).is_symlink()]
        for name in [*files, *links]:
            relative = (here / name).relative_to(folder).as_posix()
            if relative not in owned or (here / name).is_symlink():
                found.append(relative)
        if len(found) > SHOWN_STRANGERS:
            break
    shown = ", ".join(repr(name) for name in found[:SHOWN_STRANGERS])
    return shown + (", …" if len(found) > SHOWN_STRANGERS else "")


def _check_not_precious(target: Path, keep: Sequence[Path]) -> None:
    """Refuse a link, ``/``, the working folder or one of its parents, and a folder holding a path
    to ``keep``, whatever ``replace`` says."""
    if target.is_symlink():
        raise PlacementRefused(f"refusing to replace {target}: it is a symbolic link")
    real = Path(os.path.realpath(target))
    if real == Path(real.anchor):
        raise PlacementRefused(f"refusing to replace {target}: it is the root folder")
    if _inside(Path(os.path.realpath(Path.cwd())), real):
        raise PlacementRefused(f"refusing to replace {target}: it holds the working folder")
    for precious in keep:
        if _inside(Path(os.path.realpath(precious)), real):
            raise PlacementRefused(f"refusing to replace {target}: it holds {precious}")


def _inside(path: Path, folder: Path) -> bool:
    """``path`` is ``folder`` or lies under it (lexically)."""
    return path == folder or folder in path.parents


def _exists(path: Path) -> bool:
    return os.path.lexists(path)  # a dangling link exists too: it must be refused, not followed


def _absolute(path: Path) -> Path:
    """``path`` made absolute without following links (a link at the target is refused, not used)."""
    return Path(os.path.abspath(path))


def _already_there(target: Path, what: str) -> PlacementRefused:
    return PlacementRefused(
        f"{target} already exists; choose another path, or pass --force to replace the {what} "
        "the arena wrote there"
    )
