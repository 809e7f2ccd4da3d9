"""The replay loop's collector settings hold only while it runs, and are undone on any exit."""

from __future__ import annotations

import gc

import pytest

from arena.core.heap import long_lived_heap


def _failing_step(young: int, seen: list[tuple[int, tuple[int, ...]]]) -> None:
    with long_lived_heap(young_threshold=young):
        seen.append((gc.get_freeze_count(), gc.get_threshold()))
        raise RuntimeError("step failed")


def test_the_heap_is_frozen_while_the_loop_runs_and_released_after_an_error() -> None:
    gc.unfreeze()  # an in-process CLI command earlier in this process may have frozen its imports
    before = gc.get_threshold()
    seen: list[tuple[int, tuple[int, ...]]] = []
    with pytest.raises(RuntimeError, match="step failed"):
        _failing_step(before[0] + 1000, seen)
    frozen, during = seen[0]
    assert frozen > 0
    assert during == (before[0] + 1000, *before[1:])
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_overlapping_scopes_keep_the_heap_frozen_until_the_last_one_leaves() -> None:
    """A sync and a replay may overlap in ``arena serve``'s threads: the inner scope's exit must
    neither thaw the outer's heap nor leave its raised threshold behind for good."""
    gc.unfreeze()
    before = gc.get_threshold()
    with long_lived_heap(young_threshold=before[0] + 1000):
        frozen = gc.get_freeze_count()
        with long_lived_heap(young_threshold=before[0] + 5000):
            assert gc.get_threshold()[0] == before[0] + 1000  # the outer scope's settings hold
        assert gc.get_freeze_count() == frozen > 0
        assert gc.get_threshold()[0] == before[0] + 1000
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
