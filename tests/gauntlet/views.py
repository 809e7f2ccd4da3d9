"""How each default view of a leaderboard ranks, labels and flags the gauntlet's agents.

A *view* answers three questions the gauntlet asks of it, from what that view shows a reader:

- ``ranking(metric)``: the agents in the view's order when ranked by ``metric`` (its default order
  for ``return_pct``), each with its shared rank (None: not ranked, e.g. FAILED or no value);
- ``value(agent, metric)`` and ``label(agent, key)``: what the view shows for that agent;
- ``flagged(agent)``: whether the view flags the agent visibly and says why: a note naming it (the
  CLI's footnote lines under a mark on its row, the JSON's ``footnotes``, the dashboard's and the
  report's notes under the table), or FAILED (not ranked).

Views: the CLI table (``arena leaderboard [--by M]``), the JSON (``arena leaderboard --json
[--by M]``), the dashboard's leaderboard page (Streamlit AppTest, "Rank by" M) and the report
(``arena report``: its leaderboard table's order, and its Scores table ranked by M).
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from arena.cli import app
from arena.reports.escaping import WORD_JOINER
from arena.scoring import SORTABLE

DEFAULT = "return_pct"
Ranking = list[tuple[int | None, str]]


def _words(text: str) -> str:
    """Text with markdown escapes, invisible joiners and line folding undone."""
    return " ".join(text.replace("\\", "").replace(WORD_JOINER, "").split())


def _lists(note: str, agent: str) -> bool:
    """Whether ``note`` lists ``agent`` as a flag's note does: after a colon or a semicolon, as
    ``name (figures)``."""
    return re.search(rf"(: |; ){re.escape(agent)} \(", note) is not None


def _first_table(text: str) -> list[str]:
    """The lines of the first Markdown table in ``text`` (header and rule included)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return lines[start:end]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


class JsonView:
    name = "json"

    def __init__(self, url: str) -> None:
        self.url = url

    @functools.cache  # noqa: B019 - one view per module-scoped fixture
    def document(self, metric: str = DEFAULT) -> dict[str, Any]:
        by = [] if metric == DEFAULT else ["--by", metric]
        return json.loads(_invoke("leaderboard", "--json", *by, "--database-url", self.url))

    def row(self, agent: str) -> dict[str, Any]:
        return next(a for a in self.document()["agents"] if a["agent"] == agent)

    def ranking(self, metric: str) -> Ranking:
        return [(a["rank"], a["agent"]) for a in self.document(metric)["agents"]]

    def value(self, agent: str, metric: str) -> Any:
        return self.row(agent)[metric]

    def label(self, agent: str, key: str) -> str | None:
        return self.row(agent).get(key)

    def flagged(self, agent: str) -> bool:
        notes = self.document()["footnotes"]
        return bool(self.row(agent)["failed"]) or any(_lists(n, agent) for n in notes)


class TableView(JsonView):
    """The printed table: its rows' order and marks, its notes; values and labels as the JSON
    behind it (the compact table prints a few of them; ``--wide`` prints the labels)."""

    name = "table"

    @functools.cache  # noqa: B019
    def text(self, metric: str = DEFAULT) -> str:
        by = [] if metric == DEFAULT else ["--by", metric]
        return _invoke("leaderboard", "--wide", *by, "--database-url", self.url)

    def rows(self, metric: str = DEFAULT) -> list[tuple[int | None, str, str, str]]:
        """(rank, agent, marks, the row's text) of every agent row, in printed order."""
        found = []
        for line in self.text(metric).splitlines():
            match = re.match(r"^\s*(\d+|—)\s+(\S+)(?:\s+([^\w\s\[(+\-−—$.,]+))?\s", line)
            if match:
                rank = None if match[1] == "—" else int(match[1])
                found.append((rank, match[2], match[3] or "", line))
        return found

    def ranking(self, metric: str) -> Ranking:
        return [(rank, agent) for rank, agent, _, _ in self.rows(metric)]

    def flagged(self, agent: str) -> bool:
        marks = next(m for _, a, m, _ in self.rows() if a == agent)
        # a note under a sign, listing the agent before the next sign's note begins
        notes = re.findall(r"(?<!\S)[¶¤!§] [^¶¤!§]*", _words(self.text()))
        listed = any(_lists(n, agent) for n in notes)
        return bool(self.row(agent)["failed"]) or (bool(marks.strip("†‡")) and listed)


class DashboardView(JsonView):
    """The dashboard's leaderboard page on its default cohort, ranked by each metric in turn."""

    name = "dashboard"

    @functools.cache  # noqa: B019
    def page(self, metric: str = DEFAULT) -> Any:
        from streamlit.testing.v1 import AppTest

        app_file = Path(__file__).resolve().parents[2] / "dashboard" / "app.py"
        previous = os.environ.get("ARENA_DATABASE_URL")
        os.environ["ARENA_DATABASE_URL"] = self.url
        try:
            page = AppTest.from_file(str(app_file), default_timeout=60)
            page.session_state["leaderboard_by"] = metric
            page.run()
        finally:
            if previous is None:
                del os.environ["ARENA_DATABASE_URL"]
            else:
                os.environ["ARENA_DATABASE_URL"] = previous
        assert [e.value for e in page.exception] == []
        return page

    def ranking(self, metric: str) -> Ranking:
        table = self.page(metric).dataframe[0].value
        return [(None if r != r else int(r), a) for r, a in zip(table["#"], table["Agent"], strict=True)]

    def status(self, agent: str) -> str:
        """The row's words about the agent: its role (FAILED, flags) and how its figures read."""
        table = self.page().dataframe[0].value
        row = table.loc[table["Agent"] == agent].iloc[0]
        return " · ".join(str(row[c]) for c in ("Role", "Return reads", "Brier reads"))

    def label(self, agent: str, key: str) -> str | None:
        shown = self.row(agent).get(key)  # the reads columns show the labels in words
        return shown if shown is not None and shown in self.status(agent) else None

    def flagged(self, agent: str) -> bool:
        notes = [_words(c.value) for c in self.page().caption]
        return "FAILED" in self.status(agent) or any(_lists(n, agent) for n in notes)


class ReportView(JsonView):
    """``arena report``: the order of its leaderboard table, its complete metrics table (every
    metric by key, per agent) ranked by a metric, and its notes."""

    name = "report"

    def __init__(self, url: str, markdown: str) -> None:
        super().__init__(url)
        self.markdown = markdown

    @functools.cached_property
    def scores(self) -> dict[str, dict[str, str]]:
        """The complete metrics table: metric key -> agent -> the cell as shown."""
        table = _first_table(self.markdown.split("### Every metric", 1)[1])
        header = [_words(c) for c in table[0].strip("|").split("|")]
        found: dict[str, dict[str, str]] = {}
        for line in table[2:]:
            cells = [_words(c) for c in line.strip("|").split("|")]
            found[cells[1]] = dict(zip(header[2:], cells[2:], strict=True))
        return found

    def default_order(self) -> list[str]:
        table = _first_table(self.markdown.split("## Leaderboard", 1)[1])
        rows = [line.strip("|").split("|") for line in table]
        return [_words(r[1]).split(";")[0].removesuffix(" (baseline)") for r in rows[2:]]

    def value(self, agent: str, metric: str) -> float | None:
        cell = self.scores[metric][agent]
        number = re.match(r"[+−-]?[\d,]*\.?\d+", cell.replace("$", ""))
        return None if number is None else float(number[0].replace("−", "-").replace(",", ""))

    def ranking(self, metric: str) -> Ranking:
        if metric == DEFAULT:
            return [(i + 1, a) for i, a in enumerate(self.default_order())]
        higher = SORTABLE[metric]
        valued = [(v, a) for a in self.default_order() if (v := self.value(a, metric)) is not None]
        ordered = sorted(valued, key=lambda va: -va[0] if higher else va[0])
        return [(1 + sum(1 for w, _ in valued if (w > v if higher else w < v)), a) for v, a in ordered]

    def label(self, agent: str, key: str) -> str | None:
        shown = self.scores.get(key, {}).get(agent)
        return None if shown in (None, "—") else shown

    def flagged(self, agent: str) -> bool:
        notes = [_words(line) for line in self.markdown.splitlines() if line.startswith("- ")]
        return any(_lists(n, agent) for n in notes) or self.scores["failed"][agent] == "yes"
