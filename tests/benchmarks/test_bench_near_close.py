"""How much of each baseline's return comes from bets placed just before a market's close.

On daily data a market's recorded price is the close of its day, usable from the next midnight:
in a market's last day or two that price can lag the news, and a bettor may profit from the lag
rather than from forecasting. This replays the demo cohort (``data/configs/demo-baselines.toml``)
through ``arena replay`` twice, as shipped (weekly rounds) and with daily rounds (where such bets
are possible every day), and splits each baseline's profit, holding every buy to its market's
resolution, by the time from the fill to the market's close: under 24 hours, 24 to 48 hours, later.
Bets at or after a close are counted apart (none may exist: closed is closed).

Records ``results/near_close.json`` (run with ``-m benchmark``); asserted: every cohort
completes, no baseline sells (every buy is held to resolution) and no fill is at or after its
market's close.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import pytest
from sqlmodel import Session, col, create_engine, select
from typer.testing import CliRunner

from arena.cli import app
from arena.commands.demo import DEMO_CONFIG
from arena.db.models import AgentRow, CohortRow, FillRow, MarketRow, ResolutionRow
from tests.benchmarks.results import Figure, record

BUCKETS = ("after_close", "under_24h", "24_to_48h", "48h_or_more")


def _bucket(hours: float) -> str:
    if hours <= 0:
        return "after_close"
    return "under_24h" if hours < 24 else "24_to_48h" if hours < 48 else "48h_or_more"


def _replay(directory: Path, every: str) -> str:
    text = DEMO_CONFIG.read_text(encoding="utf-8")
    assert 'every = "7d"' in text
    config = directory / f"demo-{every}.toml"
    config.write_text(text.replace('every = "7d"', f'every = "{every}"', 1), encoding="utf-8")
    url = f"sqlite:///{directory / f'{every}.db'}"
    done = CliRunner().invoke(app, ["replay", str(config), "--database-url", url])
    assert done.exit_code == 0, done.output
    return url


def _split(url: str) -> dict[str, dict[str, Decimal]]:
    """Per agent: bets, dollars staked and P/L held to resolution, per bucket."""
    with Session(create_engine(url)) as session:
        (status,) = session.exec(select(CohortRow.status)).all()
        rows = session.exec(
            select(
                AgentRow.name,
                FillRow.kind,
                FillRow.outcome,
                FillRow.amount,
                FillRow.fee,
                FillRow.shares,
                FillRow.filled_at,
                MarketRow.close_time,
                ResolutionRow.payouts_json,
                ResolutionRow.kind,
            )
            .join(AgentRow, col(AgentRow.id) == col(FillRow.agent_id))
            .join(MarketRow, col(MarketRow.id) == col(FillRow.market_id))
            .join(ResolutionRow, col(ResolutionRow.market_id) == col(FillRow.market_id), isouter=True)
            .where(col(FillRow.kind).in_(("buy", "sell")))
        ).all()
    assert status == "completed"
    table: dict[str, dict[str, dict[str, Decimal]]] = defaultdict(
        lambda: {b: {"bets": Decimal(0), "staked": Decimal(0), "pnl": Decimal(0)} for b in BUCKETS}
    )
    for name, kind, outcome, amount, fee, shares, at, close, payouts, resolved in rows:
        assert kind == "buy", "a baseline sold: its buys are no longer held to resolution"
        assert close is not None
        cell = table[name][_bucket((close - at).total_seconds() / 3600)]
        cell["bets"] += 1
        cell["staked"] += amount
        if resolved is not None and resolved != "VOID":
            cell["pnl"] += shares * Decimal(payouts[outcome]) - amount - fee
    return {a: _shares(b) for a, b in sorted(table.items())}


def _shares(buckets: dict[str, dict[str, Decimal]]) -> dict[str, Decimal]:
    """Totals, and the stake and P/L of the bets within one and two days of a close."""
    near = ("under_24h", "24_to_48h")
    return {
        "staked": sum((b["staked"] for b in buckets.values()), Decimal(0)),
        "pnl": sum((b["pnl"] for b in buckets.values()), Decimal(0)),
        "after_close": buckets["after_close"]["bets"],
        "staked_1d": buckets["under_24h"]["staked"],
        "staked_2d": sum((buckets[b]["staked"] for b in near), Decimal(0)),
        "bets_2d": sum((buckets[b]["bets"] for b in near), Decimal(0)),
        "pnl_2d": sum((buckets[b]["pnl"] for b in near), Decimal(0)),
    }


def _figures(schedule: str, agents: dict[str, dict[str, Decimal]]) -> list[Figure]:
    staked = sum((a["staked"] for a in agents.values()), Decimal(0))
    figures = [
        Figure(
            f"{schedule}: all baselines' stake placed within 1 day of a close",
            _pct(sum((a["staked_1d"] for a in agents.values()), Decimal(0)), staked),
            "%",
        ),
        Figure(
            f"{schedule}: all baselines' stake placed within 2 days of a close",
            _pct(sum((a["staked_2d"] for a in agents.values()), Decimal(0)), staked),
            "%",
        ),
    ]
    for name, a in agents.items():
        figures.append(
            Figure(
                f"{schedule}, {name}: P/L of its {_bets(a['bets_2d'])} within 2 days of a close "
                f"({_pct(a['staked_2d'], a['staked']):.1f}% of its stake; its P/L in all "
                f"{float(a['pnl']):+,.0f} $)",
                round(float(a["pnl_2d"]), 2),
                "$",
            )
        )
    return figures


def _bets(count: Decimal) -> str:
    return f"{int(count)} bet" + ("" if count == 1 else "s")


def _pct(part: Decimal, whole: Decimal) -> float:
    return 0.0 if whole == 0 else round(float(100 * part / whole), 2)


@pytest.mark.benchmark
def test_near_close_share_of_each_baselines_return(tmp_path: Path) -> None:
    figures = []
    for schedule, every in (("weekly rounds", "7d"), ("daily rounds", "1d")):
        agents = _split(_replay(tmp_path, every))
        assert all(a["after_close"] == 0 for a in agents.values()), agents  # closed is closed
        figures += _figures(schedule, agents)
    record(
        "near_close",
        measures="each baseline's profit (every buy held to resolution) from bets placed within 1 and "
        "2 days of its market's close, demo config, weekly and daily rounds",
        figures=figures,
        command="pytest tests/benchmarks/test_bench_near_close.py -s -m benchmark",
    )
