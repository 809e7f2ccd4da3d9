"""Plug-ins that are not Bettors, one defect each, for the plug-in error-message tests."""

from __future__ import annotations

from agents.types import AgentView, Decision


class SyncDecide:
    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    def decide(self, view: AgentView) -> Decision:
        return Decision()


class NoUsesPeers:
    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        return Decision()


class OwnName:
    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = "something-else"

    async def decide(self, view: AgentView) -> Decision:
        return Decision()


class RejectsSettings:
    uses_peers = False

    def __init__(self, name: str, level: int = 1) -> None:
        if level > 3:
            raise ValueError(f"level must be at most 3, got {level}")
        self.name = name

    async def decide(self, view: AgentView) -> Decision:
        return Decision()


NOT_CALLABLE = 42
