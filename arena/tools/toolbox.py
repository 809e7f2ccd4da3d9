"""The registry of research tools and the ``Toolbox`` an agent is handed for one round.

Adding a tool is one module defining a ``Tool`` and one line in ``TOOLS``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import anyio

from agents.tools import ToolError, ToolSpec
from arena.tools.base import Tool, ToolContext, check_arguments
from arena.tools.market_tools import MARKET_DETAILS, PRICE_HISTORY, SEARCH_MARKETS
from arena.tools.news_tool import SEARCH_NEWS
from arena.tools.portfolio_tool import PORTFOLIO

TOOLS: tuple[Tool, ...] = (PRICE_HISTORY, MARKET_DETAILS, SEARCH_MARKETS, PORTFOLIO, SEARCH_NEWS)


class ArenaToolbox:
    """The tools of one agent in one round; answers are JSON text."""

    def __init__(self, context: ToolContext, tools: Sequence[Tool] = TOOLS) -> None:
        self._context = context
        self._tools = {tool.spec.name: tool for tool in tools}

    def specs(self) -> Sequence[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    async def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"unknown tool {name[:80]!r}; the tools are: {', '.join(self._tools)}")
        checked = check_arguments(tool.spec, arguments)
        if tool.blocking:
            answer = await anyio.to_thread.run_sync(tool.run, self._context, checked)
        else:
            answer = tool.run(self._context, checked)
        return json.dumps(answer, ensure_ascii=False, allow_nan=False)
