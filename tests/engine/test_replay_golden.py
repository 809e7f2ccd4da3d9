"""The demo cohort's replay stores and reports exactly what it did before the replay was made
faster: same fills, marks, settlements, decisions, scores and report tables, byte for byte
(``golden_replay`` says what is normalised and how to regenerate the fingerprints)."""

from __future__ import annotations

import json
import os

from sqlalchemy import Engine

from tests.engine.golden_replay import GOLDEN, demo_fingerprint


def test_demo_replay_matches_its_golden_fingerprint(engine: Engine) -> None:
    stored = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    actual = demo_fingerprint(engine)
    backend = engine.dialect.name
    if os.environ.get("ARENA_WRITE_GOLDEN") == "1":
        stored[backend] = actual
        GOLDEN.write_text(json.dumps(stored, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = stored[backend]
    changed = sorted(n for n in expected.keys() | actual.keys() if expected.get(n) != actual.get(n))
    assert not changed, f"the replay's stored results moved in: {changed}"
    # A real replay, not an empty one (each market is untradable while the default tournament
    # hidden period keeps its price hidden: some 900 fills, not 1,000 and more).
    assert actual["fills"]["rows"] > 800 and actual["portfolio_snapshots"]["rows"] > 2000
