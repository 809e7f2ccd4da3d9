"""Keeping Python's cyclic garbage collector off a long-lived heap during bulk work.

A replay and a live sync each make a great many short-lived objects on top of a large heap that
outlives them (imported modules, the dataset or the stored state, the database engine); every
full collection walks all of it again. ``long_lived_heap`` scopes that work.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def long_lived_heap(young_threshold: int = 20_000) -> Iterator[None]:
    """Keep Python's cyclic garbage collector off what lives for the whole of a bulk job.

    The dataset, the runtime and the imported modules are a large heap that outlives the loop;
    every full collection walked all of it again (about a sixth of a 50-agent replay's CPU). The
    heap as it is when the loop starts is frozen (``gc.freeze``: refcounting still frees it, the
    collector just stops scanning it), and young objects are collected in larger batches, since a
    step makes thousands of short-lived ones. Both are undone when the loop ends."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(young_threshold, thresholds[0]), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
