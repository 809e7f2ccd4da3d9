"""Research tools for LLM bettors, answering strictly as of the round's time (docs/tools.md)."""
