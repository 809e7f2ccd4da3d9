"""A cohort report is complete, self-describing and self-contained."""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from sqlalchemy import Engine, func, select

from agents.llm.settings import TEMPLATES_DIR
from arena.core.clock import SimulatedClock
from arena.db.models import AgentRow, DecisionRow, FillRow, PortfolioSnapshotRow
from arena.reports.bundle import build_report
from arena.reports.escaping import markdown_text
from arena.reports.manifest import REPORT_FORMAT_VERSION
from arena.scoring.metrics.registry import METRICS
from tests.dashboard.world import REPLAY

TABLES = (
    "agents", "breakdowns", "calibration", "decisions", "fills", "llm_requests", "portfolio_snapshots",
    "positions", "resolutions", "rounds", "scores", "tool_calls",
)  # fmt: skip


def _sha(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_bundle_holds_every_table_in_full_with_checksums(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    report = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ)

    folder = report.folder
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    expected = [f"tables/{t}.{ext}" for t in TABLES for ext in ("csv", "parquet")]
    assert names == sorted(
        ["config.toml", "manifest.json", "metrics.csv", "report.html", "report.md", *expected]
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["files"]) == set(names) - {"manifest.json"}
    for name, digest in manifest["files"].items():
        assert digest == _sha(folder / name), name
    with world.connect() as connection:

        def count(model: object, *where: object) -> int:
            return int(connection.execute(select(func.count()).select_from(model).where(*where)).scalar())

        in_cohort = AgentRow.cohort_id == REPLAY
        snapshots = count(PortfolioSnapshotRow, PortfolioSnapshotRow.cohort_id == REPLAY)
        fills = connection.execute(
            select(func.count())
            .select_from(FillRow)
            .join(AgentRow, AgentRow.id == FillRow.agent_id)
            .where(in_cohort)
        ).scalar()
        decisions = count(DecisionRow, DecisionRow.cohort_id == REPLAY)
    assert report.rows["portfolio_snapshots"] == snapshots == 5 * 28
    assert report.rows["fills"] == fills and report.rows["decisions"] == decisions == 20
    for table in TABLES:
        parquet = pl.read_parquet(folder / f"tables/{table}.parquet")
        assert len(parquet) == report.rows[table] == len(pl.read_csv(folder / f"tables/{table}.csv"))


def test_tables_keep_exact_money_and_the_scores_of_the_leaderboard(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ).folder

    fills = pl.read_parquet(folder / "tables/fills.parquet")
    assert fills.schema["amount"] == pl.Decimal(38, 6) and fills.schema["price"] == pl.Decimal(38, 10)
    first = fills.row(0, named=True)
    assert (first["agent"], first["kind"], str(first["amount"])) == ("gpt-4o", "buy", "500.000000")
    scores = pl.read_parquet(folder / "tables/scores.parquet")
    assert scores["agent"].to_list()[0] == "gpt-4o"  # ranked by return: its +$525.42 leads
    assert scores.filter(pl.col("agent") == "gpt-4o")["pnl"].item() == Decimal("525.418143")
    csv_line = (folder / "tables/fills.csv").read_text().splitlines()[1]
    assert "2025-01-06T00:00:00.000000Z" in csv_line and ",500.000000," in csv_line


def test_manifest_records_config_code_data_models_and_prompts(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ).folder

    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["report_format_version"] == REPORT_FORMAT_VERSION == 1
    assert manifest["created_at"] == "2025-03-01T09:30:00Z"
    assert manifest["cohort"]["config_hash_verified"] is True
    assert manifest["cohort"]["config"]["schedule"] == {"every": "7d", "rounds": 4, "catch_up_grace": "1h"}
    assert manifest["dataset"]["name"] == "forecastbench"
    assert manifest["dataset"]["files_match_hash"] is True
    assert manifest["dataset"]["content_hash"].startswith("sha256:")
    assert manifest["models"] == {
        "broken-bot": "acme/broken-1",
        "claude": "anthropic/claude-sonnet-4.5",
        "gpt-4o": "openai/gpt-4o",
    }
    assert manifest["prompt_templates"] == {
        "v1": {n: _sha(TEMPLATES_DIR / "v1" / n) for n in ("system.txt", "user.txt")}
    }
    assert manifest["scoring"]["bootstrap"]["seed"] == 0
    git = manifest["generator"]["git"]
    assert git is None or (len(git["commit"]) == 40 and isinstance(git["dirty"], bool))


def test_html_opens_offline_with_plotly_embedded_once(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ).folder

    page = (folder / "report.html").read_text()
    assert page.count("plotly.js v") == 1  # the library banner: embedded exactly once
    assert page.count('class="plotly-graph-div"') == 4
    assert re.search(r"<script[^>]*\ssrc=", page) is None  # nothing fetched: it opens offline
    assert re.search(r"<link[^>]*\shref=\"?https?:", page) is None
    for section in ("Leaderboard", "Equity curves", "Calibration", "Agents", "Configuration", "Methodology"):
        assert f"<h2>{section}</h2>" in page
    markdown = (folder / "report.md").read_text()
    # gpt-4o is an LLM of a replay cohort without knowledge_cutoff, and its small bets read as less
    # likely than their prices (fa): the report says both, as plain text (nothing here opens
    # Markdown: no backslash).
    gpt = "| 1 | gpt-4o (leakage guard: off); ¶ bets read incoherently (fa) | 5.25% ["
    assert re.search(re.escape(gpt) + r"[^\]]*\] \| \+\$525\.42 \|", markdown)
    assert "- **Note:** leakage guard: off for gpt-4o (replay LLM without knowledge_cutoff)" in markdown


def test_no_prompts_leaves_raw_prompts_responses_and_tool_texts_out(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = build_report(
        world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ, prompts=False
    ).folder

    decisions = pl.read_parquet(folder / "tables/decisions.parquet")
    assert "raw_prompt" not in decisions.columns and "raw_response" not in decisions.columns
    assert "<markets>" not in (folder / "tables/decisions.csv").read_text()
    calls = pl.read_parquet(folder / "tables/tool_calls.parquet")
    assert calls.height == 4 and "result" not in calls.columns and "arguments" not in calls.columns
    assert calls["result_sha256"].to_list() == ["b" * 64] * 4
    assert json.loads((folder / "manifest.json").read_text())["options"] == {"prompts": False}


def test_zip_holds_the_folder_byte_for_byte(world: Engine, clock: SimulatedClock, tmp_path: Path) -> None:
    report = build_report(world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ)

    assert report.zip == tmp_path / "out" / "demo.zip"
    with zipfile.ZipFile(report.zip) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    files = {
        f"demo/{p.relative_to(report.folder).as_posix()}": p.read_bytes()
        for p in report.folder.rglob("*")
        if p.is_file()
    }
    assert members == files


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_no_zip_writes_only_the_folder(world: Engine, clock: SimulatedClock, tmp_path: Path) -> None:
    report = build_report(
        world, REPLAY, tmp_path / "out" / "demo", clock=clock, environ=os.environ, make_zip=False
    )
    assert report.zip is None and not (tmp_path / "out" / "demo.zip").exists()


def test_every_metric_is_in_the_reports_scores_table(
    world: Engine, clock: SimulatedClock, tmp_path: Path
) -> None:
    folder = build_report(world, REPLAY, tmp_path / "report", clock=clock, environ=os.environ).folder
    markdown = (folder / "report.md").read_text()
    scores = markdown.split("## Scores", 1)[1].split("\n## ", 1)[0]
    for metric in METRICS:
        assert f"| {markdown_text(metric.key)} |" in scores, metric.key
    html = (folder / "report.html").read_text()
    assert all(f"<td>{metric.key}</td>" in html for metric in METRICS)
