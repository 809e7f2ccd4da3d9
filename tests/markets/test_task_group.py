"""``markets.concurrency.task_group``: a lone error leaves the group as itself, so callers can tell a
lost database or a venue error from a bug; several errors stay grouped."""

from __future__ import annotations

import anyio
import pytest
from sqlalchemy.exc import OperationalError

from markets.concurrency import gather_bounded, task_group
from markets.http import VenueHTTPError


async def _fails(error: Exception) -> None:
    raise error


def test_a_lone_error_in_a_task_leaves_as_itself() -> None:
    lost = OperationalError("SELECT 1", {}, Exception("server closed the connection"))

    async def main() -> None:
        async with task_group() as group:
            group.start_soon(anyio.sleep, 5)  # cancelled by the failure below
            group.start_soon(_fails, lost)

    with pytest.raises(OperationalError) as raised:
        anyio.run(main)
    assert raised.value is lost


def test_a_lone_error_of_the_body_leaves_as_itself() -> None:
    async def main() -> None:
        async with task_group() as group:
            group.start_soon(anyio.sleep, 5)
            raise VenueHTTPError("GET /markets answered 503")

    with pytest.raises(VenueHTTPError, match="503"):
        anyio.run(main)


def test_several_errors_stay_grouped() -> None:
    async def main() -> None:
        async with task_group() as group:
            group.start_soon(_fails, ValueError("one"))
            group.start_soon(_fails, KeyError("two"))

    with pytest.raises(ExceptionGroup) as raised:
        anyio.run(main)
    assert {type(e) for e in raised.value.exceptions} == {ValueError, KeyError}


def test_gather_bounded_raises_a_calls_error_as_itself() -> None:
    async def ok() -> int:
        return 1

    async def bad() -> int:
        raise VenueHTTPError("POST /books answered 500")

    with pytest.raises(VenueHTTPError, match="500"):
        anyio.run(gather_bounded, [ok, bad, ok], 2)
