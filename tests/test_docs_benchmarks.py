"""``docs/benchmarks.md`` shows the stored benchmark results, never figures typed by hand."""

from __future__ import annotations

from tests.benchmarks.summary import PAGE, rendered


def test_the_benchmarks_page_shows_the_stored_results() -> None:
    page = PAGE.read_text(encoding="utf-8")
    assert page == rendered(page), "run `python -m tests.benchmarks.summary` and commit the page"
