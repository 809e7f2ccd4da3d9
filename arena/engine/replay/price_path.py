"""The dataset's price path of the markets a replay offered, stored as it becomes known.

Rounds store only the prices they showed, at round times. What a market did between rounds is
what the Metaculus tournament's reference follows (``arena.scoring.rules.tournament``: m(t) is
the market's last price at t, so restating a stale price scores below 0), and what the dashboard
draws. So at every step of the replay each offered market still unresolved gets its latest
dataset price, once per price point, as a ``market_snapshot`` row stamped with the point's own
time (point in time: a point is stored at the first step at or after it became usable). Source
``PATH_SOURCE``: no live reader takes it for a synced price.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime

from sqlmodel import Session

from arena.db.models import MarketSnapshotRow
from arena.db.types import decimals_to_json
from arena.db.upsert import insert_ignore
from markets.types import MarketSource

PATH_SOURCE = "replay"


class PricePath:
    """The price points of a replay's markets not stored yet (kept in memory: one stamp a market)."""

    def __init__(self, source: MarketSource) -> None:
        self.source = source
        self._stamps: dict[str, datetime] = {}

    def new_points(self, market_ids: Collection[str], at: datetime) -> list[dict[str, object]]:
        """``market_snapshot`` rows of the latest price at ``at`` of each market whose latest point
        is not stored yet (a resumed replay may offer a point again: storing ignores it)."""
        rows: list[dict[str, object]] = []
        for market_id, price in sorted(self.source.latest_prices(sorted(market_ids), at).items()):
            if self._stamps.get(market_id) == price.observed_at:
                continue
            self._stamps[market_id] = price.observed_at
            rows.append(
                {
                    "market_id": market_id,
                    "source": PATH_SOURCE,
                    "observed_at": price.observed_at,
                    "prices_json": decimals_to_json(price.prices),
                }
            )
        return rows


def store_points(session: Session, rows: Sequence[dict[str, object]]) -> None:
    """Store price points; one already stored (same market, source and time) is left as it is."""
    if rows:
        insert_ignore(
            session, MarketSnapshotRow, list(rows), on=["market_id", "source", "observed_at"], count=False
        )
