"""Bettors: the contract every agent implements, LLM bettors, baselines, crowd and plug-ins."""
