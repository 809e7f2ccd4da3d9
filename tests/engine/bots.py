"""Plug-in bettors for engine tests (loaded by the arena like any user's bot, by path)."""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import ClassVar

from agents.types import AgentView, Decision, Usage
from portfolio.actions import Bet


class SlowBettor:
    """Waits ``delay`` seconds, then bets ``stake`` on YES of the first market offered."""

    uses_peers = False

    def __init__(self, name: str, delay: float = 0.3, stake: int = 100) -> None:
        self.name, self.delay, self.stake = name, delay, Decimal(stake)

    async def decide(self, view: AgentView) -> Decision:
        await asyncio.sleep(self.delay)
        if not view.snapshot.entries:
            return Decision()
        return Decision(actions=(Bet(view.snapshot.entries[0].market.market_id, "YES", self.stake),))


class FailingBettor:
    """Fails like an LLM whose provider answers 402 Payment Required."""

    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        raise RuntimeError("provider answered 402 Payment Required")


class SpyBettor:
    """Holds, and appends what it was shown (prices, portfolio) to a JSON-lines file."""

    uses_peers = False

    def __init__(self, name: str, log: str, stake: int = 0) -> None:
        self.name, self.log, self.stake = name, Path(log), Decimal(stake)

    async def decide(self, view: AgentView) -> Decision:
        seen = {
            "round": view.round_index,
            "prices_visible": view.prices_visible,
            "markets": sorted(e.market.market_id for e in view.snapshot.entries),
            "prices": {
                e.market.market_id: {o: str(p) for o, p in e.price.prices.items()}
                for e in view.snapshot.entries
            },
            "history": sum(len(e.history) for e in view.snapshot.entries),
            "positions": [
                [p.market_id, str(p.mark_price), str(p.value), p.stale] for p in view.portfolio.positions
            ],
        }
        with self.log.open("a", encoding="utf-8") as out:
            out.write(json.dumps(seen) + "\n")
        if self.stake and view.round_index == 0 and view.snapshot.entries:
            return Decision(actions=(Bet(view.snapshot.entries[0].market.market_id, "YES", self.stake),))
        return Decision()


class OddTextBettor:
    """Writes what no database column can hold as is: NUL and lone surrogates in every text field."""

    uses_peers = False
    ODD = "nul \x00, lone \ud800 and \udfff"

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        return Decision(
            actions=(Bet(self.ODD, "YES\x00", Decimal(10)),),
            probabilities={self.ODD: {"YES\ud800": 0.5}},
            reasoning=self.ODD,
            raw_response=self.ODD,
        )


class SloppyBettor:
    """A type-sloppy plug-in: int ids (``mode="int-ids"``), or odd text in its error and prompt fields."""

    uses_peers = False

    def __init__(self, name: str, mode: str = "error") -> None:
        self.name, self.mode = name, mode

    async def decide(self, view: AgentView) -> Decision:
        if self.mode == "int-ids":
            bet = Bet(123, "YES", Decimal(10))  # type: ignore[arg-type]
            return Decision(actions=(bet,), probabilities={123: {"YES": 0.5}})  # type: ignore[dict-item]
        return Decision(error="boom", error_kind="bad\x00kind", prompt_hash="h\ud800", prompt_version="v\x00")


class AbsurdUsageBettor:
    """Reports usage no request could have (``mode``: a cost of 1e308, a NaN cost, negative
    tokens) beside a bet it would like executed."""

    uses_peers = False
    USAGES: ClassVar[dict[str, Usage]] = {
        "huge-cost": Usage(cost_usd=Decimal("1e308"), attempts=1),
        "nan-cost": Usage(cost_usd=Decimal("NaN"), attempts=1),
        "negative-tokens": Usage(prompt_tokens=-5, attempts=1),
    }

    def __init__(self, name: str, mode: str) -> None:
        self.name, self.usage = name, self.USAGES[mode]

    async def decide(self, view: AgentView) -> Decision:
        market = view.snapshot.entries[0].market.market_id
        return Decision(actions=(Bet(market, "YES", Decimal(100)),), usage=self.usage, raw_response="{}")
