"""The process's one TLS context for outbound HTTPS (venues and LLM providers).

Building one loads the CA bundle (certifi, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR``): 0.05–0.1 s of
CPU each time. Every sync (``arena serve`` runs one every few minutes) and every replay's agent
clients share this one instead; the bundle is read when it is first needed.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def tls_context() -> ssl.SSLContext:
    """httpx's default context, built once per process."""
    return httpx.create_ssl_context()
