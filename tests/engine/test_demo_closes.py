"""The demo cohort on the bundled dataset never offers, fills or sells a market at or after its
close, while positions bought before a close are still marked and settled after it."""

from __future__ import annotations

from sqlalchemy import Engine
from sqlmodel import Session, col, func, select
from typer.testing import CliRunner

from arena.cli import app
from arena.commands.demo import DEMO_CONFIG
from arena.db.models import FillRow, MarketRow, RoundMarketRow, RoundRow


def test_the_demo_never_trades_a_market_at_or_after_its_close(engine: Engine) -> None:
    url = engine.url.render_as_string(hide_password=False)
    done = CliRunner().invoke(app, ["replay", str(DEMO_CONFIG), "--database-url", url])
    assert done.exit_code == 0, done.output
    closes = col(MarketRow.close_time)
    with Session(engine) as session:
        trades = (
            select(FillRow.filled_at, closes)
            .join(MarketRow, col(MarketRow.id) == col(FillRow.market_id))
            .where(col(FillRow.kind).in_(("buy", "sell")))
        )
        filled = session.exec(trades).all()
        offered = session.exec(
            select(RoundRow.scheduled_at, closes)
            .join(RoundMarketRow, col(RoundMarketRow.round_id) == col(RoundRow.id))
            .join(MarketRow, col(MarketRow.id) == col(RoundMarketRow.market_id))
        ).all()
        settled_after_close = session.exec(
            select(func.count())
            .select_from(FillRow)
            .join(MarketRow, col(MarketRow.id) == col(FillRow.market_id))
            .where(col(FillRow.kind) == "settle", col(FillRow.filled_at) > closes)
        ).one()
    assert len(filled) > 400 and len(offered) > 1000  # not vacuous: the demo trades a lot
    assert all(close is not None for _, close in filled)  # every bundled market has a close time
    late_fills = [(at, close) for at, close in filled if close is not None and at >= close]
    late_offers = [(at, close) for at, close in offered if close is not None and at >= close]
    assert late_fills == [] and late_offers == []
    assert settled_after_close > 0  # positions held through a close still settle at resolution
