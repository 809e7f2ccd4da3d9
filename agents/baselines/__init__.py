"""Deterministic reference bettors: what an LLM has to beat to have shown any skill.

One rule each, stated in the class docstring and the README table: ``hold``, ``market``,
``half``, ``random``, ``favorite``, ``contrarian`` and ``kelly``.
"""

# The kinds the registry builds from this package; scoring and reports mark them as baselines.
BASELINE_KINDS: frozenset[str] = frozenset(
    {"hold", "market", "half", "random", "favorite", "contrarian", "kelly"}
)

# Kinds whose statements carry no information by construction: the crowd never counts them as
# peers (a constant 0.5 member would only drag its aggregate toward 0.5).
UNINFORMED_KINDS: frozenset[str] = frozenset({"half"})
