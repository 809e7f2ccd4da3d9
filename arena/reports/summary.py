"""The words and formatted numbers of a report, shared by ``report.html`` and ``report.md``.

Both renderings say the same things in the same order; only the markup differs. Numbers are
formatted here once (dollars to the cent, scores to three places, intervals in brackets).

Tables have one row per agent and a few columns, so they fit a page: the leaderboard shows the
verdicts (``LEADERBOARD``), the scores table the rest of the registry's headline metrics, and
every registered metric goes to ``metrics`` (metric rows, agent columns), which the HTML folds
away and the bundle also writes as ``metrics.csv``. The config is its TOML text, the same as
``config.toml``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import polars as pl

from arena.cohorts.export import config_toml
from arena.db.statuses import FINISHED_ROUND_STATUSES
from arena.reports.content import ReportContent
from arena.reports.formatting import MISSING, metric_text, money, number, percent, share, signed_money
from arena.reports.notes import IMPUTED_NOTE, adjusted_notes, stated_notes
from arena.scoring.board.notes import flags_of, leaderboard_notes
from arena.scoring.load.frames import Reading, suffixed
from arena.scoring.metrics.registry import BY_KEY, METRICS, headline
from arena.scoring.metrics.spec import Metric

Row = dict[str, str]

METHODOLOGY = (
    "Every agent started with the same bankroll and saw the same point-in-time market snapshot in each "
    "round: only prices observed at or before the round time. Bets filled at the snapshot's price; "
    "positions were marked to the latest real price (a missing price is carried forward and flagged "
    "stale, never invented) and settled at $1 per winning share, refunded if the market was voided.",
    "Return is P/L over the bankroll. A bet is read as a forecast in two ways, both always shown. fa "
    "(Forecaster Arena's bet-size rule): its amount over the largest bet allowed at the start of its "
    "decision (25% of the cash by default) is the probability of its side, so a max bet is 100% "
    "confident and a small bet reads as a forecast against its side. kelly: the probability at which "
    "the bet is the full-Kelly stake, p + φ·(1 − p) with p the fill price and φ the bet over the cash. "
    "The Brier score of a bet is (implied probability − outcome)², 0 perfect and 0.25 for always saying "
    "50%. Skill vs market compares it with the Brier of the market price the bet filled at, on the same "
    "bets. Labels follow Forecaster Arena's bands; a note flags an agent whose Brier label and return "
    "label point opposite ways, and ¶ one whose reading contradicts most of its bets (reads them as "
    "less likely than the price paid: tiny bets on longshots score a near-perfect fa Brier while losing "
    "money), whose Brier and skill then say nothing about those bets. Voided markets are left out of "
    "every score.",
    "Stated probabilities are scored with the Brier and log scores, each statement weighted by how long "
    "it stood before the next one or the resolution; the relative log score compares it with the market "
    "price the agent could see. Selection matters: an agent stating only easy markets would look good, so "
    "the imputed stated Brier scores every agent that stated anything on every (round, market) offered "
    "to it, a missing forecast taking that round's market price, or 0.5 where the round hid it; imputed "
    "share says how much was filled in, and an agent that never stated has no stated score. Each market "
    "weighs once, however many outcomes it has. Markets still open are scored apart, against their "
    "latest price, and make stated scores provisional.",
    "The tournament follows the Metaculus rules: a forecast scores ln(forecast / market price) over "
    "each question's window, the price following its path between rounds; the price is hidden for the "
    "first part of each window, and coverage counts only there, so restating the price wins nothing. "
    "A pool only one agent covers pays it S / (S + 1), what it would take against the price itself.",
    "Intervals are 95% percentile intervals of a bootstrap over markets (all bets and forecasts on a "
    "market are resampled together), with the replicates and seed given in manifest.json. With fewer "
    "than 30 resolved markets they are wide: treat rankings as tentative; a comparison with No. 1 on "
    "fewer than 30 common markets, or whose bootstrap has no variance, has no p-value.",
    "Baseline bots are simple, deterministic references: an LLM should beat them before claiming skill. "
    "External forecasters (a human panel, an offline model run) were imported with their forecasts' own "
    "times and are scored on the same markets by the same stated rules; they never bet.",
    "Across pooled cohorts, whose agents drew different markets, the adjusted Brier separates each "
    "market's difficulty from each agent's skill (a fixed-effects fit of every agent's Brier per market, "
    "the market's price as reference): what the agent would score on the average market. A report of "
    "one cohort gives none: its agents were offered the same markets.",
)


# The leaderboard's verdicts; "brier" and "bss_market" in the cohort's headline reading.
LEADERBOARD = ("return_pct", "pnl", "brier", "bss_market", "stated_brier_imputed", "valid_rate")


@dataclass(frozen=True)
class Summary:
    title: str
    facts: list[tuple[str, str]]
    leaderboard: list[Row]  # one row per agent: rank, agent and flags, the verdicts
    scores: list[Row]  # one row per agent: the other headline metrics
    metrics: list[Row]  # every registered metric (rows) by agent (columns)
    footnotes: list[str]
    calibration: list[Row]
    agents: list[tuple[str, list[tuple[str, str]]]]
    errors: list[Row]
    config: str  # the frozen config as TOML (``config.toml``)
    notes: tuple[str, ...] = METHODOLOGY


def summarize(content: ReportContent, created_at: datetime) -> Summary:
    cohort, tables = content.cohort, content.tables
    implied: Reading = content.scoring["implied"]
    board = list(content.leaderboard.iter_rows(named=True))
    fills, rounds = tables["fills"], tables["rounds"]
    facts = [
        ("Cohort", f"{cohort['name']} ({cohort['id']})"),
        ("Mode and status", f"{cohort['mode']}, {cohort['status']}"),
        ("Period", _period(cohort["started_at"], cohort["finished_at"])),
        ("Agents", str(len(tables["agents"]))),
        ("Rounds finished", str(rounds.filter(pl.col("status").is_in(FINISHED_ROUND_STATUSES)).height)),
        ("Bets placed", str(fills.filter(pl.col("kind") == "buy").height)),
        ("Markets resolved", str(len(tables["resolutions"]))),
        ("Config hash", str(cohort["config_hash"])),
        ("Report created", _when(created_at)),
    ]
    rows = list(content.leaderboard.iter_rows(named=True))
    notes = [n for n in stated_notes(rows) if n != IMPUTED_NOTE] + adjusted_notes(rows)
    facts += [("Note", note) for note in notes]
    return Summary(
        title=f"Cohort report: {cohort['name']}",
        facts=facts,
        leaderboard=[_leaderboard_row(r, implied) for r in board],
        scores=[_scores_row(r, implied) for r in board],
        metrics=[_metric_row(m, board, implied) for m in METRICS],
        footnotes=leaderboard_notes(board, implied),
        calibration=[
            _calibration_row(r)
            for r in content.calibration_summary.sort("agent", "source").iter_rows(named=True)
        ],
        agents=[(r["agent"], _agent_facts(r, tables)) for r in content.leaderboard.iter_rows(named=True)],
        errors=_error_rows(tables["decisions"]),
        config=frozen_config(cohort),
    )


def frozen_config(cohort: dict[str, Any]) -> str:
    """The cohort's frozen config (already redacted) as TOML, headed by its id and hash."""
    header = [f"cohort {cohort['id']}: its frozen config", f"config sha256 {cohort['config_hash']}"]
    return config_toml(cohort["config_json"], header=header)


def _leaderboard_keys(implied: Reading) -> tuple[str, ...]:
    return tuple(suffixed(k, implied) if k in ("brier", "bss_market") else k for k in LEADERBOARD)


def _leaderboard_row(r: dict[str, Any], implied: Reading) -> Row:
    """The leaderboard: rank, the agent with its flags, and the verdicts (``LEADERBOARD``)."""
    flags = [f"{flag.mark} {flag.words}" for flag in flags_of(r)]
    row = {"#": MISSING if r["rank"] is None else str(r["rank"]), "Agent": "; ".join([_agent(r), *flags])}
    return row | {_title(BY_KEY[k], implied): _value(BY_KEY[k], r) for k in _leaderboard_keys(implied)}


def _scores_row(r: dict[str, Any], implied: Reading) -> Row:
    """The scores table: the headline metrics the leaderboard leaves out (value is P/L's)."""
    shown = {*_leaderboard_keys(implied), "value"}
    rest = [m for m in headline(implied) if m.key not in shown]
    return {"Agent": r["agent"]} | {_title(m, implied): _value(m, r) for m in rest}


def _agent(r: dict[str, Any]) -> str:
    return (
        str(r["agent"])
        + (" (baseline)" if r["baseline"] else "")
        + (" (external)" if r["external"] else "")
        + (" (leakage guard: off)" if r["leakage_guard"] == "off" else "")
    )


def _title(m: Metric, implied: Reading) -> str:
    return m.display_label(implied) + (" [95% CI]" if m.interval else "")


def _metric_row(m: Metric, board: list[dict[str, Any]], implied: Reading) -> Row:
    """One registered metric across the agents: the report's complete metrics table."""
    return {"Metric": m.display_label(implied), "Key": m.key} | {r["agent"]: _value(m, r) for r in board}


def _value(m: Metric, r: dict[str, Any]) -> str:
    lo, hi = (r[f"{m.key}_lo"], r[f"{m.key}_hi"]) if m.interval else (None, None)
    return metric_text(m.fmt, r[m.key], lo, hi)


def _calibration_row(r: dict[str, Any]) -> Row:
    return {
        "Agent": r["agent"],
        "Forecasts": r["source"],
        "Brier": number(r["brier"]),
        "ECE": number(r["ece"]),
        "Reliability": number(r["reliability"]),
        "Resolution": number(r["resolution"]),
    }


def _agent_facts(r: dict[str, Any], tables: dict[str, pl.DataFrame]) -> list[tuple[str, str]]:
    seat = tables["agents"].filter(pl.col("agent") == r["agent"]).row(0, named=True)
    mine = tables["decisions"].filter(pl.col("agent") == r["agent"])
    kinds = (
        mine.drop_nulls("error_kind")
        .group_by("error_kind")
        .len()
        .sort("len", "error_kind", descending=[True, False])
    )
    problems = ", ".join(f"{k} ×{n}" for k, n in kinds.iter_rows()) or "none"
    return [
        ("Kind", f"{seat['kind']}{' (baseline)' if seat['baseline'] else ''}{_external(r)}"),
        ("Model", seat["model_id"] or MISSING),
        (
            "Value (P/L)",
            f"{money(r['value'])} ({signed_money(r['pnl'])}, {percent(r['return_pct'], signed=True)})",
        ),
        ("Realised / unrealised", f"{signed_money(r['realized_pnl'])} / {signed_money(r['unrealized_pnl'])}"),
        (
            "Bets (resolved)",
            f"{r['bets']} ({r['resolved_bets']}), staked {money(r['staked'])}, "
            f"win rate {share(r['win_rate'])}",
        ),
        (
            "Brier (bets: fa, kelly) / stated",
            f"{number(r['brier'])}, {number(r['brier_kelly'])} / {number(r['stated_brier'])}",
        ),
        (
            "Stated Brier imputed (share imputed) / Autocast",
            f"{number(r['stated_brier_imputed'])} ({share(r['imputed_share'])}) / "
            f"{number(r['stated_brier_autocast'])}",
        ),
        (
            "Stated events still open (provisional Brier vs latest price)",
            f"{r['provisional_events']} ({number(r['stated_brier_provisional'])})",
        ),
        ("Leakage guard", _guard(r)),
        ("Max drawdown", share(r["max_drawdown"], digits=1)),
        ("Decisions", f"{r['decisions']}, valid {share(r['valid_rate'])}; errors: {problems}"),
        (
            "Tokens, cost, latency",
            f"{r['tokens'] or 0:,} tokens, ${float(r['cost'] or 0):,.4f}, "
            f"mean {number(r['mean_latency_s'], 2)} s",
        ),
    ]


def _external(r: dict[str, Any]) -> str:
    return " (external forecaster: imported forecasts, no bets)" if r["external"] else ""


def _error_rows(decisions: pl.DataFrame, limit: int = 50) -> list[Row]:
    failed = decisions.filter(pl.col("status").is_in(["error", "rejected"])).head(limit)
    return [
        {
            "Round": str(d["round_index"]),
            "Agent": d["agent"],
            "Status": d["status"],
            "Kind": d["error_kind"] or MISSING,
            "Message": (d["error"] or "")[:300],
        }
        for d in failed.iter_rows(named=True)
    ]


def _period(started: datetime | None, finished: datetime | None) -> str:
    if started is None:
        return "not started"
    return f"{_when(started)} to {_when(finished) if finished else 'now'}"


def _when(moment: datetime | None) -> str:
    return MISSING if moment is None else moment.strftime("%Y-%m-%d %H:%M UTC")


def _guard(r: dict[str, Any]) -> str:
    if r["leakage_guard"] is None:
        return "not applicable (not a replay LLM)"
    early = r["rounds_before_cutoff"]
    return str(r["leakage_guard"]) + (
        f"; {early} rounds before its knowledge cutoff (flagged)" if early else ""
    )
