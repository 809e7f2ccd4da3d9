"""Both bet-implied readings through the leaderboard, the headline choice, and label disagreement."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine, update
from sqlalchemy.orm import Session
from typer.testing import CliRunner

from arena.cli import app
from arena.cohorts.config import ConfigError, parse_config
from arena.db.models import CohortRow
from arena.scoring import ScoringFrames, Settings, leaderboard, leaderboard_document
from arena.scoring.load.database import CohortScoring, cohort_scoring
from arena.scoring.load.rows import LoadError
from tests.scoring.builders import build, buy, day, mark, resolution, seat
from tests.scoring.stored import populate

FAV, DOG = "polymarket:fav", "polymarket:dog"


def _frames() -> ScoringFrames:
    # fav: $500 YES at 0.80 with $10,000 cash (max bet 2,500), YES wins. fa: c = 0.2,
    #   Brier (0.2 − 1)² = 0.64 (Very Poor); kelly: φ = 0.05, P = 0.80 + 0.05 · 0.20 = 0.81,
    #   Brier 0.19² = 0.0361 (Excellent); market 0.8: Brier 0.04, kelly skill 1 − 0.0361/0.04 = 0.0975.
    #   Marked at 13,000: +30% (Excellent) → fa disagrees (Very Poor vs Excellent), kelly agrees.
    # dog: $500 NO at 0.20 (the NO side's price), same cash, YES wins. fa: P(NO) = 0.2, P(YES) = 0.8,
    #   Brier 0.04 (Excellent); kelly: P(NO) = 0.20 + 0.05 · 0.80 = 0.24, P(YES) = 0.76, Brier
    #   0.0576 (Excellent); market on NO 0.2 → Brier 0.04, kelly skill 1 − 0.0576/0.04 = −0.44.
    #   Marked at 7,000: −30% (Very Poor) → both readings disagree with the return.
    return build(
        agents=[seat("fav"), seat("dog")],
        fills=[
            buy("fav", FAV, "YES", "500", 0.80, cash="10000"),
            buy("dog", DOG, "NO", "500", 0.20, cash="10000"),
        ],
        resolutions=[resolution(FAV, "YES", at=day(2)), resolution(DOG, "YES", at=day(2))],
        snapshots=[mark("fav", day(3), "13000"), mark("dog", day(3), "7000")],
    )


def test_kelly_reading_ranks_the_favourite_bettor_first_and_fa_the_underdog() -> None:
    by_kelly = leaderboard(_frames(), by="brier_kelly", replicates=20)
    by_fa = leaderboard(_frames(), by="brier", replicates=20)
    assert by_kelly["agent"].to_list() == ["fav", "dog"]
    assert by_fa["agent"].to_list() == ["dog", "fav"]
    fav, dog = (by_kelly.row(i, named=True) for i in range(2))
    assert (fav["brier"], fav["brier_kelly"]) == (pytest.approx(0.64), pytest.approx(0.0361))
    assert (dog["brier"], dog["brier_kelly"]) == (pytest.approx(0.04), pytest.approx(0.0576))
    assert (fav["bss_market_kelly"], dog["bss_market_kelly"]) == (pytest.approx(0.0975), pytest.approx(-0.44))
    assert (fav["bss_random_kelly"], dog["bss_random_kelly"]) == (
        pytest.approx(1 - 0.0361 / 0.25),
        pytest.approx(1 - 0.0576 / 0.25),
    )
    assert (fav["brier_label"], fav["brier_label_kelly"], fav["return_label"]) == (
        "Very Poor",
        "Excellent",
        "Excellent",
    )
    assert (fav["label_conflict"], dog["label_conflict"]) == ("fa", "fa, kelly")
    # One bet each: a single market, so the interval is the point.
    assert (fav["brier_kelly_lo"], fav["brier_kelly_hi"]) == (pytest.approx(0.0361), pytest.approx(0.0361))


def test_the_json_names_the_headline_reading_and_footnotes_every_disagreement() -> None:
    document = leaderboard_document(
        _frames(), Settings(replicates=20, implied="kelly"), cohorts=["c1"], as_of=None
    )
    assert document["implied"] == "kelly"
    # One line per reading whose labels disagree (each naming its agents), then fav's fa reading,
    # which contradicts its bet (0.2 < 0.80 paid).
    fa, kelly, incoherent = document["footnotes"]
    assert incoherent.startswith("Brier (bets) in the fa reading reads at least 50%")
    assert "(Brier, share of bets): fav (0.640, 100%). Nobody" in incoherent  # dog's bets are coherent
    assert fa.startswith(
        "Brier (bets) [fa] and return disagree: fav 0.640 reads Very Poor, return +30.0% reads Excellent; "
        "dog "
    )
    assert kelly.startswith(
        "Brier (bets) and return disagree: dog 0.058 reads Excellent, return -30.0% reads Very Poor."
    )
    assert "(kelly reading)" in kelly and "fav" not in kelly
    assert {row["agent"] for row in document["calibration"]["implied_kelly"]} == {"fav", "dog"}


def test_scoring_implied_is_validated_strictly() -> None:
    hold = [{"name": "h", "kind": "hold"}]
    assert (
        parse_config({"name": "x", "agents": hold, "scoring": {"implied": "kelly"}}).scoring.implied
        == "kelly"
    )
    with pytest.raises(ConfigError, match=r"scoring\.implied: Input should be 'fa' or 'kelly'"):
        parse_config({"name": "x", "agents": hold, "scoring": {"implied": "half"}})
    with pytest.raises(ConfigError, match=r"scoring\.implid: unknown key"):
        parse_config({"name": "x", "agents": hold, "scoring": {"implid": "fa"}})


def _set(engine: Engine, cohort: str, **values: object) -> None:
    with Session(engine) as session:
        session.execute(update(CohortRow).where(CohortRow.id == cohort).values(**values))
        session.commit()


def test_every_view_takes_seed_and_reading_from_the_cohort(engine: Engine) -> None:
    populate(engine)
    _set(engine, "c2", seed=5, config_json={"rules": {"bankroll": "10000"}, "scoring": {"implied": "kelly"}})
    assert cohort_scoring(engine, ["c2"]) == CohortScoring(seed=5, implied="kelly")
    assert cohort_scoring(engine, ["c1", "c2"]) == CohortScoring(seed=0, implied="fa")  # the first by id
    url = engine.url.render_as_string(hide_password=False)
    result = CliRunner().invoke(
        app, ["leaderboard", "--cohort", "c2", "--json", "--replicates", "20", "--database-url", url]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["bootstrap"]["seed"], document["implied"]) == (5, "kelly")
    _set(engine, "c2", config_json={"rules": {"bankroll": "10000"}, "scoring": {"implied": "both"}})
    with pytest.raises(LoadError, match=r"cohort 'c2' cannot be scored: scoring.implied: "):
        cohort_scoring(engine, ["c2"])
