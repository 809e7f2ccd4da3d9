"""Deterministic reference bettors: what an LLM has to beat to have shown any skill.

One rule each, stated in the class docstring and the README table: ``hold``, ``market``,
``half``, ``random``, ``favorite``, ``contrarian`` and ``kelly``.
"""

# The kinds the registry builds from this package; scoring and reports mark them as baselines.
BASELINE_KINDS: frozenset[str] = frozenset(
    {"hold", "market", "half", "random", "favorite", "contrarian", "kelly"}
)
