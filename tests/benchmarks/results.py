"""Benchmark results as data: each benchmark writes its figures to ``results/<name>.json``.

A result holds the figures of the last run on this machine, each with its unit and, where the
benchmark has them, the floor measured in the same run and the target; beside them, the machine
and the command that produced them. ``docs/benchmarks.md`` shows them as one table, rendered by
``python -m tests.benchmarks.summary`` (``tests/test_docs_benchmarks.py`` keeps the two in step).
History is the files' git log.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


@dataclass(frozen=True)
class Figure:
    """One measured figure: what it is, its value and unit, and what it is read against."""

    what: str
    value: float
    unit: str
    floor: float | None = None  # the least the work could cost, measured in the same run
    target: str | None = None  # e.g. "≤ 3 s"; None: a figure for sizing, no target
    met: bool | None = None  # whether the figure meets the target (None without one)

    @property
    def ratio(self) -> float | None:
        return None if not self.floor else self.value / self.floor


def record(name: str, *, measures: str, figures: list[Figure], command: str) -> Path:
    """Write ``results/<name>.json``: the figures of this run, the machine and the command; print
    them too (``pytest -s``)."""
    RESULTS.mkdir(exist_ok=True)
    document = {
        "benchmark": name,
        "measures": measures,
        "command": command,
        "date": datetime.now(UTC).date().isoformat(),
        "machine": machine(),
        "figures": [{**asdict(f), "ratio": f.ratio} for f in figures],
    }
    print(f"\n{name}: {measures}")
    for f in figures:
        beside = f"; floor {f.floor:.4g} {f.unit}, ratio {f.ratio:.2f}" if f.ratio is not None else ""
        print(f"  {f.what}: {f.value:.4g} {f.unit}{beside}" + (f" (target {f.target})" if f.target else ""))
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def machine() -> dict[str, object]:
    """What the figures were measured on: CPU model, cores, Python, load average at the end."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_average": round(os.getloadavg()[0], 1),
    }


def load_all() -> list[dict[str, object]]:
    """Every stored result, by benchmark name."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(RESULTS.glob("*.json"))]
