"""A plug-in bettor that holds, slowly, and touches a file when first asked: a test's signal that
the replay is under way (``test_database_vanishes``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agents.types import AgentView, Decision


class SlowBettor:
    uses_peers = False

    def __init__(self, name: str, signal: str, pause_s: float = 0.2) -> None:
        self.name = name
        self.signal = Path(signal)
        self.pause_s = pause_s

    async def decide(self, view: AgentView) -> Decision:
        self.signal.touch()
        await asyncio.sleep(self.pause_s)
        return Decision(reasoning="holding")
