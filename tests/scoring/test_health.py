"""Failed agents: fewer than half of their answers valid, named with their most common error."""

from __future__ import annotations

import polars as pl

from arena.scoring.rules.health import FailedAgent, failed_agents


def test_failed_agents_are_those_below_half_valid_answers() -> None:
    decisions = pl.DataFrame(
        {
            "agent": ["dead"] * 3 + ["flaky"] * 4 + ["fine"] * 2,
            # dead: 0 of 3 valid; flaky: 2 of 4 (exactly half: not failed); fine: 2 of 2.
            "error_kind": [
                "http_error",
                "timeout",
                "http_error",
                None,
                None,
                "timeout",
                "timeout",
                None,
                None,
            ],
        }
    )
    assert failed_agents(decisions) == [FailedAgent("dead", 3, 0, "http_error", 2)]
    one_short = decisions.with_columns(
        error_kind=pl.when(pl.int_range(pl.len()) == 3).then(pl.lit("invalid_json")).otherwise("error_kind")
    )  # flaky: 1 of 4 valid, three errors, timeout the commonest
    assert [(f.agent, f.valid, f.top_error, f.top_error_count) for f in failed_agents(one_short)] == [
        ("dead", 0, "http_error", 2),
        ("flaky", 1, "timeout", 2),
    ]
    assert failed_agents(decisions.head(0)) == []


def test_holds_for_the_budget_are_not_answers() -> None:
    """An agent held for its dollar cap for most of a run was not asked: it has not failed."""
    decisions = pl.DataFrame(
        {"agent": ["capped"] * 4, "error_kind": [None, "over_budget", "over_budget", "over_budget"]}
    )
    assert failed_agents(decisions) == []
    broken = pl.DataFrame(
        {"agent": ["capped"] * 4, "error_kind": ["timeout", "over_budget", "over_budget", "over_budget"]}
    )
    assert failed_agents(broken) == [FailedAgent("capped", 1, 0, "timeout", 1)]
