"""HTTP clients for LLM agents: one connection pool per agent, all closed when the run ends.

Agents used to share one ``httpx.AsyncClient``. httpcore's pool does work proportional to its
number of connections on every request and response (it walks them all to hand out the free
ones, checking each socket's expiry and readability: encode/httpcore#1035), so one pool serving
100 concurrent agents spent from 0.3 s up to seconds of CPU per round, all of it before the last
request could leave. An agent asks one question at a time, so a pool of its own holds one
connection and does that walk over one. The pools share the process's one TLS context
(``arena.core.tls``), because building one loads the CA bundle (~90 ms each); it is asked for with
the first client, so a run of baselines alone never builds it; nor does it import httpx, anyio
or the limiter (about 45 ms of CPU with httpx's command-line module): they are imported with the
first client too.

The arena still owns connections and shutdown: it makes an ``AgentHttpClients`` per run, hands
``new_client`` to ``build_bettor``, and closes every client it handed out when the run ends.
Clients made with the same ``ProviderLimits`` (a cohort's ``[llm_limits]``) send through one
limiter per provider (``agents.llm.limiter``), however many agents call it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agents.llm.limits import ProviderLimits

if TYPE_CHECKING:
    import httpx

    from agents.llm.limiter import ProviderLimiters

# What a cohort's runtime is handed: a new client for one agent, under the cohort's limits.
ClientUnderLimits = Callable[[ProviderLimits], "httpx.AsyncClient"]


class AgentHttpClients:
    """Hands out a new ``httpx.AsyncClient`` per LLM agent; ``async with`` closes them all."""

    def __init__(self) -> None:
        self._clients: list[httpx.AsyncClient] = []
        self._limiters: dict[ProviderLimits, ProviderLimiters] = {}

    def new_client(self, limits: ProviderLimits | None = None) -> httpx.AsyncClient:
        """A client of its own; with ``limits``, its requests go through the provider's limiter."""
        import httpx  # here, not at the top: see the module docstring

        from agents.llm.limiter import LimitedClient, ProviderLimiters
        from arena.core.tls import tls_context

        if limits is None:
            client = httpx.AsyncClient(verify=tls_context())
        else:
            limiters = self._limiters.setdefault(limits, ProviderLimiters(limits))
            client = LimitedClient(limiters, verify=tls_context())
        self._clients.append(client)
        return client

    async def aclose(self) -> None:
        clients, self._clients = self._clients, []
        if not clients:
            return
        import anyio  # imported with the first client: see the module docstring

        async with anyio.create_task_group() as group:
            for client in clients:
                group.start_soon(client.aclose)

    async def __aenter__(self) -> AgentHttpClients:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
