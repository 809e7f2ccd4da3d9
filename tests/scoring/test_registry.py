"""The metric registry is the one list: JSON, the report's scores table and docs/scoring.md follow it."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arena.scoring import Settings, leaderboard_document
from arena.scoring.metrics.registry import COLUMNS, METRICS, SORTABLE, docs_table, headline
from arena.scoring.metrics.spec import Metric, Ratio
from tests.scoring.builders import build, buy, seat

SCORING_DOC = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def test_every_metric_is_in_the_json_with_its_interval() -> None:
    frames = build(agents=[seat("a")], fills=[buy("a", "polymarket:m", "YES", "500", 0.4)])
    document = json.loads(
        json.dumps(leaderboard_document(frames, Settings(replicates=20), cohorts=["c1"], as_of=None))
    )
    keys = set(document["agents"][0])
    for metric in METRICS:
        assert set(metric.columns) <= keys, metric.key
    assert list(document["agents"][0]) == list(COLUMNS)


def test_the_readme_lists_every_metric_as_the_registry_says() -> None:
    text = SCORING_DOC.read_text()
    assert docs_table() in text, "docs/scoring.md JSON key table is stale: paste registry.docs_table()"
    for metric in METRICS:
        assert f"`{metric.key}`" in text


def test_a_ratio_reads_a_known_row_source() -> None:
    with pytest.raises(ValueError, match="ratio source 'trades' is not one of bets, events"):
        Ratio("trades", pl.col("x"))


def test_a_metric_is_computed_exactly_one_way() -> None:
    with pytest.raises(ValueError, match="exactly one of ratio, per_agent, derive"):
        Metric("x", "X", "nothing", "score")
    with pytest.raises(ValueError, match="an interval needs a ratio"):
        Metric("x", "X", "a label", "text", interval=True, derive=lambda _: pl.lit(1))


def test_sort_keys_and_headline_follow_the_registry() -> None:
    assert SORTABLE["brier_kelly"] is False and SORTABLE["return_pct"] is True
    kelly_first = [m.key for m in headline("kelly")]
    fa_first = [m.key for m in headline("fa")]
    assert kelly_first.index("brier_kelly") < kelly_first.index("brier")
    assert fa_first.index("brier") < fa_first.index("brier_kelly")
    assert sorted(kelly_first) == sorted(fa_first)


def test_a_new_ratio_metric_is_one_entry() -> None:
    # A mean of a per-bet column declared once gives its point value and interval.
    metric = Metric(
        "x", "X", "mean price", "score", better="higher", interval=True, ratio=Ratio("bets", pl.col("price"))
    )
    assert metric.columns == ("x", "x_lo", "x_hi")
