"""The dashboard's first page shows one cohort unless asked: the latest by default, and "All
cohorts that ran" pools only cohorts that ran, naming those it left out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from sqlmodel import Session

from arena.db.models import AgentRow, CohortRow
from arena.reports.escaping import WORD_JOINER
from tests.dashboard.conftest import Runner, world_copy
from tests.dashboard.world import LIVE, REPLAY

Dashboard = Callable[[str], Runner]


def test_all_cohorts_leave_out_a_pending_one_and_say_so(
    dashboard: Dashboard, world_url: str, tmp_path: Path
) -> None:
    def queue_an_older_cohort(session: Session) -> None:
        first = session.get(CohortRow, REPLAY)
        assert first is not None
        early = first.created_at - timedelta(days=1)  # older than both: not the latest
        session.add(
            CohortRow(
                id="queued",
                name="queued",
                mode="replay",
                status="pending",
                config_json={},
                config_hash="h",
                created_at=early,
            )
        )
        session.flush()
        session.add(AgentRow(cohort_id="queued", name="ghost", kind="hold", created_at=early))

    run = dashboard(world_copy(world_url, tmp_path / "queued.db", queue_an_older_cohort))

    default = run("leaderboard")
    assert [e.value for e in default.exception] == []
    assert default.sidebar.selectbox(key="cohort").value == REPLAY  # the latest cohort alone

    pooled = run("leaderboard", cohort="__all__")
    assert [e.value for e in pooled.exception] == []
    agents = set(pooled.dataframe[0].value["Agent"])
    assert "ghost" not in agents and {"gpt-4o", "hold"} <= agents
    captions = [c.value for c in pooled.caption]
    pooled_ids = ", ".join(sorted([LIVE, REPLAY]))
    assert any(
        f"2 cohorts pooled: {pooled_ids}; left out (never ran or stopped): queued (pending)."
        in c.replace("\\", "").replace(WORD_JOINER, "")
        for c in captions
    ), captions
