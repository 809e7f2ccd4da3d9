"""Rendering an ``AgentView`` into the versioned prompt templates.

Market text (questions, descriptions, outcome names, even ids) is written by strangers, so it
only ever enters the prompt as JSON strings inside ``<markets>``/``<positions>`` blocks, with
the characters that could close those blocks or a code fence (``<``, ``>``, backtick) and
invisible characters (bidi overrides, zero-width and tag characters) written as ``\\uXXXX``
escapes. A question cannot end the data block and start talking to the model.

When the universe is larger than ``max_markets``, the prompt lists the markets with the highest
volume (ties: earliest close, then id) and says so; the rule is documented in the README. The
same ranking is cut shorter when the whole prompt would exceed ``prompt_token_budget`` (an
estimate: ``CHARS_PER_TOKEN`` characters per token), so a model with a small context window is
never sent a prompt its server silently truncates. Rules and positions are always given in full.
"""

from __future__ import annotations

import functools
import hashlib
import json
import unicodedata
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from string import Template
from typing import Any

from agents.llm.settings import TEMPLATES_DIR, LLMSettings
from agents.llm.wire import ChatMessage
from agents.types import AgentView, PositionView
from markets.types import MarketSnapshot, SnapshotEntry

_SECONDS_PER_DAY = 86_400
# The usual rule of thumb for English and JSON text; the budget is an estimate, not a count.
CHARS_PER_TOKEN = 4
_FENCE_TABLE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "`": "\\u0060"})
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp"})
# Stands in for the market list while the rest of the user prompt is rendered. Prompt text never
# holds a NUL: data lines escape control characters and the templates are ours.
_MARKETS_HERE = "\x00"
# A str as json.dumps(..., ensure_ascii=False) writes it, quotes included.
_json_string: Callable[[str], str] = json.encoder.encode_basestring


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    system: str
    user: str
    version: str
    sha256: str
    markets: tuple[SnapshotEntry, ...]  # the markets listed, in prompt order
    system_json: str  # ``system`` and ``user`` as JSON string literals (ensure_ascii=False)
    user_json: str

    def messages(self) -> list[ChatMessage]:
        """The system and user messages, ready to be joined into a request body."""
        return [
            ChatMessage("system", self.system, self.system_json),
            ChatMessage("user", self.user, self.user_json),
        ]


@functools.cache
def load_templates(version: str) -> tuple[Template, Template]:
    """The (system, user) templates of a prompt version; read once per process."""
    folder = TEMPLATES_DIR / version
    return (
        Template((folder / "system.txt").read_text(encoding="utf-8")),
        Template((folder / "user.txt").read_text(encoding="utf-8")),
    )


def render_prompt(view: AgentView, settings: LLMSettings) -> RenderedPrompt:
    """The prompt for ``view``: every rule and position, and the top markets that fit the budget."""
    system_template, user_template = load_templates(settings.prompt_version)
    block = _BLOCKS.get(view, settings)
    system = system_template.substitute()
    count = len(block.shown)
    head, tail = _around_markets(user_template, _user_fields(view, settings, count))
    budget = settings.prompt_token_budget * CHARS_PER_TOKEN
    # Each pass drops the markets that overflow; the note about them can grow, hence the loop.
    while count and len(system) + len(head) + block.chars(count) + len(tail) > budget:
        rest = len(system) + len(head) + len(tail)
        count = min(count - 1, block.fitting(budget - rest))
        head, tail = _around_markets(user_template, _user_fields(view, settings, count))
    user = head + block.joined(count) + tail
    system_json, user_json = _json_string(system), _user_json(head, block.escaped(count), tail)
    digest = hashlib.sha256(f"[{system_json}, {user_json}]".encode()).hexdigest()
    return RenderedPrompt(
        system, user, settings.prompt_version, digest, block.shown[:count], system_json, user_json
    )


def _around_markets(user_template: Template, fields: dict[str, str]) -> tuple[str, str]:
    """The user prompt before and after the market list, which goes between them."""
    head, tail = user_template.substitute(fields, markets=_MARKETS_HERE).split(_MARKETS_HERE)
    return head, tail


def _user_json(head: str, markets_escaped: str, tail: str) -> str:
    """``json.dumps(head + markets + tail, ensure_ascii=False)`` from the market list escaped before.

    JSON escapes character by character, so the market list (nearly all of the prompt) is escaped
    once per round, in its cached block; the request body and the prompt's digest
    (sha256 of ``json.dumps([system, user], ensure_ascii=False)``) are built from this literal.
    """
    return _json_string(head)[:-1] + markets_escaped + _json_string(tail)[1:]


@dataclass(frozen=True, slots=True)
class _MarketBlock:
    snapshot: MarketSnapshot  # held so that its id cannot be reused while the block is cached
    shown: tuple[SnapshotEntry, ...]
    lines: tuple[str, ...]
    text: str  # all the lines, joined once for the agents that see them all
    text_escaped: str  # ``text`` as in a JSON string, without the quotes (request body and digest)
    ends: tuple[int, ...]  # ends[k]: characters of the first k lines joined

    @classmethod
    def of(cls, snapshot: MarketSnapshot, shown: tuple[SnapshotEntry, ...], lines: list[str]) -> _MarketBlock:
        ends = [0]
        for index, line in enumerate(lines):
            ends.append(ends[-1] + len(line) + (1 if index else 0))  # a newline before all but the first
        text = "\n".join(lines)
        return cls(snapshot, shown, tuple(lines), text, _json_string(text)[1:-1], tuple(ends))

    def chars(self, count: int) -> int:
        return self.ends[count]

    def fitting(self, chars: int) -> int:
        """The most leading lines whose joined text has at most ``chars`` characters."""
        return max(bisect_right(self.ends, chars) - 1, 0)

    def joined(self, count: int) -> str:
        return self.text if count == len(self.lines) else "\n".join(self.lines[:count])

    def escaped(self, count: int) -> str:
        return self.text_escaped if count == len(self.lines) else _json_string(self.joined(count))[1:-1]


class _MarketBlockCache:
    """The market list of a round, rendered once for all the agents that see it.

    Every agent of a round is handed the same snapshot, and the market list depends only on
    it, the time, price visibility and two settings; rendering it per agent was most of the
    CPU of a decision (100 agents, 50 markets). Snapshots hold dicts and are not hashable, so
    the key is the snapshot's identity.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._blocks: OrderedDict[tuple[object, ...], _MarketBlock] = OrderedDict()

    def get(self, view: AgentView, settings: LLMSettings) -> _MarketBlock:
        key = (
            id(view.snapshot),
            view.now,
            view.prices_visible,
            settings.max_markets,
            settings.max_description_chars,
        )
        block = self._blocks.get(key)
        if block is None or block.snapshot is not view.snapshot:
            shown = select_markets(view.snapshot.entries, settings.max_markets)
            lines = [_market_line(view, e, settings.max_description_chars) for e in shown]
            block = _MarketBlock.of(view.snapshot, shown, lines)
            self._blocks[key] = block
            if len(self._blocks) > self._size:
                self._blocks.popitem(last=False)
        return block


_BLOCKS = _MarketBlockCache(size=16)


def select_markets(entries: Iterable[SnapshotEntry], limit: int) -> tuple[SnapshotEntry, ...]:
    """The ``limit`` markets with the highest volume (unknown volume last), then earliest close, then id."""

    def rank(entry: SnapshotEntry) -> tuple[bool, Decimal, bool, float, str]:
        market = entry.market
        close = market.close_time
        return (
            market.volume is None,
            -(market.volume or Decimal(0)),
            close is None,
            close.timestamp() if close else 0.0,
            market.market_id,
        )

    return tuple(sorted(entries, key=rank)[:limit])


def quote_data(record: dict[str, Any]) -> str:
    """One JSON line of untrusted data with fence-breaking and invisible characters escaped."""
    line = json.dumps(record, ensure_ascii=False).translate(_FENCE_TABLE)
    if line.isprintable():  # the common case: nothing invisible to escape
        return line
    return "".join(_escape_invisible(char) for char in line)


def _escape_invisible(char: str) -> str:
    if unicodedata.category(char) in _INVISIBLE_CATEGORIES:
        return json.dumps(char)[1:-1]  # \uXXXX (a surrogate pair above the BMP)
    return char


def _user_fields(view: AgentView, settings: LLMSettings, count: int) -> dict[str, str]:
    """Every field of the user template but ``markets``; ``count`` markets are listed."""
    portfolio, rules = view.portfolio, view.rules
    total = len(view.snapshot.entries)
    entries = view.snapshot.by_id()
    return {
        "now": _utc(view.now),
        "round_index": str(view.round_index),
        "knowledge_note": _knowledge_note(settings),
        "cash": _money(portfolio.cash),
        "max_bet": _money(rules.max_bet(portfolio.cash)),  # rounded down: never above the real limit
        "max_bet_percent": f"{(rules.max_bet_fraction * 100).normalize():f}",
        "min_bet": _money(rules.min_bet, ROUND_CEILING),
        "bet_note": _bet_note(view),
        "position_count": str(len(portfolio.positions)),
        "value_note": (
            f"; positions value {_money(portfolio.total_value - portfolio.cash)}; "
            f"total value {_money(portfolio.total_value)}"
            if view.prices_visible
            else "; their marks are hidden this round"
        ),
        "position_note": _position_note(view),
        "positions": "\n".join(_position_line(p, entries, view.prices_visible) for p in portfolio.positions),
        "market_note": _market_note(count, total),
        "price_note": _price_note(view.prices_visible),
    }


def _knowledge_note(settings: LLMSettings) -> str:
    """A line of its own (with its newline) or nothing: the template leaves no blank line for it."""
    if settings.knowledge_cutoff is None:
        return ""
    return (
        f"Your training data ends around {settings.knowledge_cutoff.isoformat()}: you know nothing "
        "about later events except what the markets below say.\n"
    )


def _bet_note(view: AgentView) -> str:
    if view.rules.max_bet(view.portfolio.cash) >= view.rules.min_bet:
        return ""
    return "- Your max bet is below the minimum bet: you cannot bet this round, but you may sell.\n"


def _position_note(view: AgentView) -> str:
    if not view.portfolio.positions:
        return "You hold no positions."
    return (
        "Each line is one position as JSON. can_sell is false for a position whose market is closed "
        "for trading (awaiting resolution) or absent from this round; stale means its mark is an older price."
    )


def _position_line(position: PositionView, entries: Mapping[str, SnapshotEntry], prices_visible: bool) -> str:
    entry = entries.get(position.market_id)
    record: dict[str, Any] = {
        "position_id": position.position_id,
        "market_id": position.market_id,
        "question": entry.market.question if entry else position.question,
        "outcome": position.outcome,
        "shares": _number(position.shares),
        "cost_basis": _number(position.cost_basis),
        "market_status": "open" if position.market_open else "closed, awaiting resolution",
        "can_sell": entry is not None and position.market_open,
    }
    if prices_visible:
        record["mark_price"] = _number(position.mark_price) if position.mark_price is not None else None
        record["value"] = _number(position.value)
        record["stale"] = position.stale
    return quote_data(record)


def _market_note(shown: int, total: int) -> str:
    if total == 0:
        return "There are no open markets this round."
    if shown == 0:
        return (
            f"None of the {total} open markets fit within this prompt's size limit. "
            "You may bet only on markets you hold."
        )
    if shown < total:
        return (
            f"Showing {shown} of {total} open markets: the {shown} with the highest trading volume "
            "(ties: earliest close, then id). You may bet only on markets listed here or on markets you hold."
        )
    return f"All {total} open markets are listed. You may bet only on these markets or on markets you hold."


def _price_note(visible: bool) -> str:
    if visible:
        return (
            "Outcome prices are the current price of one share (the market's probability). "
            "An outcome priced null (no price), 0 or 1 cannot be bet on."
        )
    return (
        "Prices are hidden this round: outcomes are listed without prices. "
        "Bets still fill at the current market price."
    )


def _market_line(view: AgentView, entry: SnapshotEntry, description_chars: int) -> str:
    market = entry.market
    outcomes: dict[str, float | None] | list[str] = list(market.outcomes)
    if view.prices_visible:
        prices = entry.price.prices
        outcomes = {o: _number(prices[o]) if o in prices else None for o in market.outcomes}
    close = market.close_time
    return quote_data(
        {
            "id": market.market_id,
            "question": market.question,
            "description": _clip(market.description, description_chars),
            "outcomes": outcomes,
            "volume": round(market.volume) if market.volume is not None else None,
            "closes": _utc(close) if close else None,
            "days_to_close": round((close - view.now).total_seconds() / _SECONDS_PER_DAY, 1)
            if close
            else None,
        }
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " …[truncated]"


def _utc(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def _money(amount: Decimal, rounding: str = ROUND_FLOOR) -> str:
    """Dollars to the cent, rounded inwards so a limit the model reads is one it can use."""
    return f"${amount.quantize(Decimal('0.01'), rounding=rounding):,}"


def _number(value: Decimal) -> float:
    """Prompt display only: a JSON number reads better than a quoted decimal string."""
    return float(value)
