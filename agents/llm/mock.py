"""The mock provider: an OpenAI-compatible chat-completions endpoint answered in-process.

``provider = "mock"`` gives an LLM agent an ``httpx`` client whose transport is this module: the
bettor renders its prompt, sends the request body and parses the response exactly as it does with
a real provider, tool-call loop and corrective retry included; only the answer comes from a seeded
policy (``MockSettings``) instead of a model. The policy reads the prompt the way a model would:
the limits line and the ``<markets>`` block. It needs no key and no server, so a cohort with an
LLM agent runs offline; its model is shown as ``mock/<model>`` everywhere, so it is never
mistaken for a real one.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from typing import Any

import httpx

from agents.llm.prompt import CHARS_PER_TOKEN
from agents.llm.settings import LLMSettings, MockSettings

_LIMITS = re.compile(
    r"Cash: \$(?P<cash>[\d,]+\.\d\d)\. Max bet: \$(?P<max>[\d,]+\.\d\d) "
    r".*?Minimum bet: \$(?P<min>[\d,]+\.\d\d)\."
)
_MARKETS = re.compile(r"<markets>\n(.*?)\n?</markets>", re.DOTALL)
_RETRY_MARK = "Your answer was rejected"
# Which offered tool the k-th call uses: research on the first market it bets on, then the news.
_TOOL_ORDER = ("price_history", "market_details", "search_news", "search_markets", "portfolio")
_CENT = Decimal("0.01")


def mock_client(settings: LLMSettings) -> httpx.AsyncClient:
    """A client whose every request is answered by the mock policy of ``settings``."""
    return httpx.AsyncClient(transport=MockTransport(settings.mock, settings.shown_model))


class MockTransport(httpx.AsyncBaseTransport):
    """Answers ``POST …/chat/completions`` in OpenAI's response shape; anything else is a 404."""

    def __init__(self, policy: MockSettings, model: str) -> None:
        self._policy = policy
        self._model = model

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
            return httpx.Response(404, json={"error": {"code": 404, "message": "mock: unknown route"}})
        body = json.loads(await request.aread())
        message, finish = answer(self._policy, body)
        content = message.get("content") or ""
        completion = {
            "id": "chatcmpl-mock",
            "object": "chat.completion",
            "created": 0,
            "model": self._model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": len(request.content) // CHARS_PER_TOKEN,
                "completion_tokens": len(content) // CHARS_PER_TOKEN,
                "cost": 0,
            },
        }
        return httpx.Response(200, json=completion)


@dataclass(frozen=True, slots=True)
class _Limits:
    cash: Decimal
    max_bet: Decimal
    min_bet: Decimal


def answer(policy: MockSettings, body: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
    """The assistant message for one request body, and its ``finish_reason``."""
    messages: Sequence[Mapping[str, Any]] = body.get("messages") or []
    prompt = next((str(m.get("content") or "") for m in messages if m.get("role") == "user"), "")
    rng = random.Random(hashlib.sha256(f"{body.get('seed', 0)}\x00{prompt}".encode()).digest())
    markets = _listed_markets(prompt)
    calls_made = sum(1 for m in messages if m.get("role") == "tool")
    offered = [t["function"]["name"] for t in body.get("tools") or () if "function" in t]
    if offered and calls_made < policy.tool_calls:
        return _tool_call(offered, calls_made, markets), "tool_calls"
    decision = _decision(policy, rng, prompt, markets)
    retrying = any(_RETRY_MARK in str(m.get("content") or "") for m in messages if m.get("role") == "user")
    if not retrying and rng.random() < policy.invalid_rate and decision["actions"]:
        decision["actions"][0]["amount"] = str(decision["actions"][0]["amount"])  # refused: not a number
    return {"role": "assistant", "content": json.dumps(decision)}, "stop"


def _listed_markets(prompt: str) -> list[dict[str, Any]]:
    """The markets of the prompt's ``<markets>`` block, in the order listed."""
    found = _MARKETS.search(prompt)
    if found is None:
        return []
    return [json.loads(line) for line in found.group(1).splitlines() if line.strip()]


def _tool_call(offered: Sequence[str], index: int, markets: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``index``-th research call: the preferred tool among those offered, on the first market."""
    usable = [name for name in _TOOL_ORDER if name in offered] or list(offered)
    name = usable[index % len(usable)]
    first = markets[0] if markets else {}
    query = " ".join(str(first.get("question", "news")).split()[:6])
    arguments: dict[str, Any] = {
        "price_history": {"market_id": first.get("id", ""), "days": 14},
        "market_details": {"market_id": first.get("id", "")},
        "search_news": {"query": query, "k": 3},
        "search_markets": {"query": query, "limit": 5},
    }.get(name, {})
    call = {
        "id": f"call_{index + 1}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def _decision(
    policy: MockSettings, rng: random.Random, prompt: str, markets: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Bets and stated probabilities by the policy (see ``MockSettings``)."""
    limits = _limits(prompt)
    actions: list[dict[str, Any]] = []
    probabilities: dict[str, float] = {}
    left = limits.cash if limits else Decimal(0)
    for market in markets:
        binary, yes = _yes_price(market)
        if not binary:
            continue
        belief = _belief(policy, rng, yes)
        if policy.state_probabilities:
            probabilities[market["id"]] = belief
        if yes is None or not _tradable(market) or limits is None or len(actions) >= policy.markets:
            continue
        amount = _amount(policy, limits)
        if amount is None or amount > left:
            continue
        outcome = "YES" if belief >= yes else "NO"
        actions.append(
            {"type": "bet", "market_id": market["id"], "outcome": outcome, "amount": float(amount)}
        )
        left -= amount
    reasoning = f"mock policy: belief {policy.belief}, {len(actions)} bet(s); not a model"
    return {"reasoning": reasoning, "actions": actions, "probabilities": probabilities}


def _yes_price(market: Mapping[str, Any]) -> tuple[bool, float | None]:
    """Whether the market is a YES/NO one (the mock leaves any other alone), and its YES price
    (None when prices are hidden)."""
    outcomes = market.get("outcomes")
    names = list(outcomes) if isinstance(outcomes, dict | list) else []
    if sorted(names) != ["NO", "YES"]:
        return False, None
    yes = outcomes.get("YES") if isinstance(outcomes, dict) else None
    return True, float(yes) if isinstance(yes, int | float) else None


def _tradable(market: Mapping[str, Any]) -> bool:
    """Both sides priced strictly between 0 and 1: what the prompt says can be bet on."""
    outcomes = market.get("outcomes")
    prices = list(outcomes.values()) if isinstance(outcomes, dict) else []
    return bool(prices) and all(isinstance(p, int | float) and 0 < p < 1 for p in prices)


def _belief(policy: MockSettings, rng: random.Random, yes: float | None) -> float:
    """The mock's probability of YES: the price, 0.5, or the price (0.5 when hidden) plus noise
    (kept within [0.01, 0.99])."""
    if policy.belief == "half":
        return 0.5
    if policy.belief == "market" and yes is not None:
        return round(yes, 3)
    centre = 0.5 if yes is None else yes
    return round(min(max(centre + rng.gauss(0.0, policy.noise), 0.01), 0.99), 3)


def _limits(prompt: str) -> _Limits | None:
    found = _LIMITS.search(prompt)
    if found is None:
        return None
    cash, max_bet, min_bet = (Decimal(found.group(k).replace(",", "")) for k in ("cash", "max", "min"))
    return _Limits(cash, max_bet, min_bet)


def _amount(policy: MockSettings, limits: _Limits) -> Decimal | None:
    """``bet_fraction`` of the max bet in cents, at least the minimum bet; None when none fits."""
    wanted = (limits.max_bet * Decimal(str(policy.bet_fraction))).quantize(_CENT, rounding=ROUND_FLOOR)
    amount = max(wanted, limits.min_bet)
    return amount if amount <= limits.max_bet else None
