"""``arena db upgrade`` / ``arena db revision`` on a real database of each backend."""

from __future__ import annotations

from typer.testing import CliRunner

from arena.cli import app
from arena.db.migrate import current_revision, head_revision


def test_upgrade_then_revision_reports_up_to_date(db_url: str) -> None:
    env = {"ARENA_DATABASE_URL": db_url}
    before = CliRunner().invoke(app, ["db", "revision"], env=env)
    assert before.exit_code == 0 and "needs" in before.output
    assert current_revision(db_url) is None
    result = CliRunner().invoke(app, ["db", "upgrade"], env=env)
    assert result.exit_code == 0, result.output
    assert current_revision(db_url) == head_revision()
    after = CliRunner().invoke(app, ["db", "revision"], env=env)
    assert "up to date" in after.output
