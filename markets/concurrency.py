"""Running a venue's requests side by side: bounded, in order, with errors callers can tell apart."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar, cast

import anyio
from anyio.abc import TaskGroup

T = TypeVar("T")


async def gather_bounded(calls: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Run the calls concurrently, at most ``limit`` at a time; results in call order.

    The rate limiters pace requests; this bounds open connections and memory in flight.
    """
    results: list[T | None] = [None] * len(calls)
    semaphore = anyio.Semaphore(max(1, limit))

    async def run(index: int) -> None:
        async with semaphore:
            results[index] = await calls[index]()

    async with task_group() as group:
        for index in range(len(calls)):
            group.start_soon(run, index)
    return cast(list[T], results)  # every slot was filled by its task


@asynccontextmanager
async def task_group() -> AsyncIterator[TaskGroup]:
    """anyio's task group, except that a lone error leaves it as itself.

    anyio wraps every error of a task group in an ``ExceptionGroup``, even a single one. Callers
    up the stack decide by type: a sync unit whose database went away is retried once it is back
    (``Worker.unit_raised`` checks for a connection error), and a venue error is reported as one
    line. Wrapped, both would look like a bug. Several errors at once stay grouped."""
    try:
        async with anyio.create_task_group() as group:
            yield group
    except BaseExceptionGroup as grouped:
        error: BaseException = grouped
        while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
            error = error.exceptions[0]
        if error is grouped or not isinstance(error, Exception):
            raise
        raise error from None
