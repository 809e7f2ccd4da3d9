"""The LLM bettor over any OpenAI-compatible chat-completions API (OpenRouter, Ollama, vLLM, llama.cpp)."""

from agents.llm.bettor import LLMBettor
from agents.llm.errors import ErrorKind
from agents.llm.settings import LLMSettings

__all__ = ["ErrorKind", "LLMBettor", "LLMSettings"]
