"""The first page's answers, computed while the dashboard's server starts.

``dashboard.launch`` runs ``warm()`` in its preload thread: it reads the latest cohort's scoring
frames and its leaderboard ranked the default way, as the first visitor's page will ask for
them. ``dashboard.queries`` calls ``take()`` before computing either: an answer for exactly its
arguments (same database, cohorts, data version and ranking) is handed over once, waiting for
it if it is still being computed; anything else is computed as usual. The first ask of a kind
ends the offer of that kind, so an answer no page wanted is not kept for the server's life.
Nothing here touches Streamlit: its caches keep what the page gets.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Any

from arena.db.engine import make_engine
from arena.reports import catalog
from arena.reports.state import database_state
from arena.scoring import SORTABLE, leaderboard, load_frames
from arena.scoring.load.database import cohort_scoring

FIRST_RANKING = next(iter(SORTABLE))  # what the leaderboard's "Rank by" opens on
_lock = threading.Lock()
_answers: dict[tuple[Any, ...], Future[Any]] = {}


def warm(url: str) -> None:
    """Compute the latest cohort's frames and default leaderboard for ``take``. A database that
    is not ready, or any error, leaves nothing warm: the page meets the same problem and shows it."""
    if not database_state(url).ready:
        return
    engine = make_engine(url)
    promised: list[Future[Any]] = []
    try:
        with engine.connect() as connection:
            version = catalog.data_version(connection)
            cohorts = catalog.cohorts(connection)
            if cohorts.is_empty():
                return
            ids = (str(cohorts["cohort_id"][0]),)  # newest first: the page's default cohort
            promised = [
                _promise("frames", url, ids, version),
                _promise("scores", url, ids, version, FIRST_RANKING),
            ]
            frames = load_frames(connection, list(ids))
            promised[0].set_result(frames)
            seed = cohort_scoring(connection, list(ids)).seed
            promised[1].set_result(leaderboard(frames, by=FIRST_RANKING, seed=seed))
    except Exception:
        for future in promised:
            if not future.done():
                future.set_result(None)
    finally:
        engine.dispose()


def take(kind: str, *arguments: Any) -> Any | None:
    """The warm answer of ``kind`` for ``arguments`` (waiting for it if it is being computed),
    else None. Every warm answer of ``kind`` is dropped on the first ask, matched or not."""
    with _lock:
        offered = {key: _answers.pop(key) for key in [k for k in _answers if k[0] == kind]}
    future = offered.get((kind, *arguments))
    return None if future is None else future.result()


def _promise(*key: Any) -> Future[Any]:
    future: Future[Any] = Future()
    with _lock:
        _answers[key] = future
    return future
