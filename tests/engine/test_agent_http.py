"""The LLM agents' HTTP clients: one per agent, one SSL context for all, all closed with the run."""

from __future__ import annotations

import pytest

from arena.core.tls import tls_context
from arena.engine.runtime.agent_http import AgentHttpClients

pytestmark = pytest.mark.anyio


async def test_every_agent_gets_its_own_client_and_the_run_closes_them_all() -> None:
    async with AgentHttpClients() as clients:
        first, second = clients.new_client(), clients.new_client()
        assert first is not second and not first.is_closed
    assert first.is_closed and second.is_closed


async def test_the_clients_share_one_ssl_context() -> None:
    async with AgentHttpClients() as clients:
        contexts = {
            id(client._transport._pool._ssl_context)  # type: ignore[attr-defined]
            for client in (clients.new_client(), clients.new_client())
        }
    assert len(contexts) == 1


async def test_a_run_without_llm_agents_never_loads_the_ca_bundle() -> None:
    """The TLS context (the CA bundle read, ~20-90 ms of CPU) is built for the first client, so a
    replay of baselines, which asks for none, does not pay for it."""
    tls_context.cache_clear()
    async with AgentHttpClients():
        pass
    assert tls_context.cache_info().currsize == 0
