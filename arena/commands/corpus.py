"""`arena corpus ...`: import dated documents for the research tools, and describe the corpora.

See docs/corpora.md for the file format, the deny-list and the point-in-time guarantee.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TransferSpeedColumn,
)

from arena.commands.options import FAILED, DatabaseOption, fail, open_engine, open_reader
from arena.commands.terminal import listing_table, plain_console, print_json, print_table
from arena.corpus.deny_list import DenyList
from arena.corpus.documents import CorpusError
from arena.corpus.market_texts import CORPUS_FILE, market_text_documents, write_market_texts
from arena.corpus.store import CorpusInfo, corpus_info, import_corpus, list_corpora
from markets.placement import PlacementRefused
from markets.replay import DatasetError, load_dataset

app = typer.Typer(no_args_is_help=True, help="corpus commands")
console = plain_console()


@app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="JSONL file: one document per line (docs/corpora.md).")],
    name: Annotated[str, typer.Option("--name", help="Corpus name (cohorts name it).")],
    replace: Annotated[
        bool, typer.Option("--replace", help="Rebuild an existing corpus of that name.")
    ] = False,
    deny_list: Annotated[
        Path | None,
        typer.Option("--deny-list", help="File of denied domains, one a line (replaces the default list)."),
    ] = None,
    deny: Annotated[
        list[str] | None, typer.Option("--deny", help="Also deny this domain (repeatable).")
    ] = None,
    database_url: DatabaseOption = None,
) -> None:
    """Import a corpus: all documents or none; restricted sources are counted and left out."""
    try:
        denied = (DenyList.read(deny_list) if deny_list else DenyList()).extended(deny or [])
    except (OSError, ValueError) as exc:
        fail(str(exc))
    if not file.is_file():
        fail(f"{file}: no such file")
    engine = open_engine(database_url)
    columns = (
        TextColumn("importing"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeElapsedColumn(),
    )
    try:
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("import", total=file.stat().st_size)
            info = import_corpus(
                engine,
                file,
                name,
                deny=denied,
                replace=replace,
                on_progress=lambda done: progress.update(task, completed=done),
            )
    except CorpusError as exc:  # a bad line or name: nothing was written
        fail(str(exc))
    except OSError as exc:
        fail(str(exc), FAILED)
    finally:
        engine.dispose()
    console.print(f"Imported corpus [bold]{escape(info.name)}[/]: {info.documents:,} documents.")
    _print_dropped(info)


@app.command("info")
def info_command(
    name: Annotated[str, typer.Argument(help="Corpus name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON (keys: docs/cli.md).")] = False,
    database_url: DatabaseOption = None,
) -> None:
    """A corpus's size, publish-date range, and what its import left out."""
    engine = open_reader(database_url)
    try:
        with engine.connect() as connection:
            info = corpus_info(connection, name)
    finally:
        engine.dispose()
    if info is None:
        fail(f"no corpus named {name!r} (`arena corpus list` shows them)")
    if as_json:
        print_json(
            {
                "name": info.name,
                "documents": info.documents,
                "first_published": _iso(info.first_published),
                "last_published": _iso(info.last_published),
                "source_file": info.source_file,
                "imported_at": _iso(info.imported_at),
                "dropped": info.dropped,
                "deny_list": list(info.deny_list),
            }
        )
        return
    table = listing_table(f"Corpus {escape(info.name)}")
    table.add_column("field", no_wrap=True)
    table.add_column("value")
    table.add_row("documents", f"{info.documents:,}")
    table.add_row("published", f"{_when(info.first_published)} … {_when(info.last_published)}")
    table.add_row("imported from", escape(info.source_file))
    table.add_row("imported at", _when(info.imported_at))
    table.add_row(
        "dropped",
        f"{sum(info.dropped.values()):,} (restricted sources: forecasting sites and prediction markets, "
        "which the Autocast competition rules forbid)",
    )
    table.add_row("deny-list", escape(", ".join(info.deny_list) or "(empty)"))
    print_table(console, table)
    _print_dropped(info)


@app.command("list")
def list_command(database_url: DatabaseOption = None) -> None:
    """Every corpus: name, documents, publish-date range, dropped documents."""
    engine = open_reader(database_url)
    try:
        with engine.connect() as connection:
            corpora = list_corpora(connection)
    finally:
        engine.dispose()
    if not corpora:
        console.print("No corpora yet: `arena corpus import FILE --name NAME` (docs/corpora.md).")
        return
    table = listing_table("Corpora")
    table.add_column("name", no_wrap=True)
    for header in ("documents", "first published", "last published", "dropped"):
        table.add_column(header, no_wrap=True, justify="right")
    for c in corpora:
        first, last = (str(d.date()) if d else "—" for d in (c.first_published, c.last_published))
        table.add_row(escape(c.name), f"{c.documents:,}", first, last, f"{sum(c.dropped.values()):,}")
    print_table(console, table)


@app.command("build-market-texts")
def build_market_texts_command(
    dataset: Annotated[Path, typer.Argument(help="A replay dataset directory.")],
    out: Annotated[
        Path | None, typer.Option("--out", help=f"Corpus file to write [default: DATASET/{CORPUS_FILE}].")
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a market-texts file written before; never another file.")
    ] = False,
) -> None:
    """Write a dataset's market texts as a corpus file, each published at its market's open time."""
    target = out or dataset / CORPUS_FILE
    try:
        texts = market_text_documents(load_dataset(dataset))
        write_market_texts(target, texts.documents, replace=force)
    except (DatasetError, PlacementRefused) as exc:
        fail(str(exc))
    except OSError as exc:
        fail(str(exc), FAILED)
    console.print(f"Wrote {len(texts.documents):,} documents to {escape(str(target))}")
    if texts.without_open_time:
        console.print(f"  left out, no open time: {texts.without_open_time}")


def _print_dropped(info: CorpusInfo) -> None:
    for domain, count in info.dropped.items():
        console.print(f"  dropped, restricted source {escape(domain)}: {count:,}")


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _when(value: datetime | None) -> str:
    return value.isoformat(timespec="seconds") if value else "—"
