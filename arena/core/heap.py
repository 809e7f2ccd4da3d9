"""Keeping Python's cyclic garbage collector off a long-lived heap during bulk work.

A replay and a live sync each make a great many short-lived objects on top of a large heap that
outlives them (imported modules, the dataset or the stored state, the database engine); every
full collection walks all of it again. ``long_lived_heap`` scopes that work.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # scopes entered and not yet left, over all threads
_saved: tuple[int, ...] = gc.get_threshold()  # the thresholds before the outermost scope


@contextmanager
def long_lived_heap(young_threshold: int = 20_000) -> Iterator[None]:
    """Keep Python's cyclic garbage collector off what lives for the whole of a bulk job.

    The dataset, the runtime and the imported modules are a large heap that outlives the loop;
    every full collection walked all of it again (about a sixth of a 50-agent replay's CPU). The
    heap as it is when the loop starts is frozen (``gc.freeze``: refcounting still frees it, the
    collector just stops scanning it), and young objects are collected in larger batches, since a
    step makes thousands of short-lived ones. Both are undone when the loop ends.

    The collector's settings belong to the process, and a sync and a replay may overlap in the
    threads of ``arena serve``: the first scope to enter sets them, the last to leave undoes them
    (an inner scope's exit would otherwise thaw the outer's heap, or keep its threshold for good)."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(young_threshold, _saved[0]), *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
                gc.unfreeze()
