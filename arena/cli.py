"""The ``arena`` command line: mounts the command groups of ``arena.commands``."""

from __future__ import annotations

import typer

from arena.commands import (
    cohort,
    corpus,
    dashboard,
    data,
    db,
    leaderboard,
    markets,
    report,
    resolutions,
    run,
    serve,
)

app = typer.Typer(
    name="arena",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    help="Bettor Arena: paper-trading cohorts of LLM bettors on real prediction markets.",
)
app.add_typer(data.app, name="data", help="Replay datasets: import, inspect.")
app.add_typer(markets.app, name="markets", help="Live markets: sync, record, pending resolutions.")
app.add_typer(db.app, name="db")
app.add_typer(cohort.app, name="cohort", help="Cohorts: launch, list, show, pause, resume, cancel.")
app.add_typer(corpus.app, name="corpus", help="Corpora for research tools: import, info, list.")
resolutions.register(markets.app)
run.register(app)
leaderboard.register(app)
report.register(app)
dashboard.register(app)
serve.register(app)


if __name__ == "__main__":
    app()
