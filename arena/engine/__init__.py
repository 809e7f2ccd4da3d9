"""The arena engine: cohorts run as rounds, claims, fills, marks, settlements and completion.

One engine for both modes: a replay steps a ``SimulatedClock`` through a dataset
(``engine.replay``) and calls exactly the round, mark and settlement code a live cohort uses.
"""
