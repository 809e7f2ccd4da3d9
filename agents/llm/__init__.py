"""The LLM bettor over any OpenAI-compatible chat-completions API (OpenRouter, Ollama, vLLM, llama.cpp).

Import from the modules (``agents.llm.bettor``, ``.settings``, ``.errors``): the package itself
imports nothing, so a cohort's runtime can read ``agents.llm.limits`` without loading httpx.
"""
