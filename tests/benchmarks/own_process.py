"""Run a benchmark's measured work in a process of its own and read that process's peak memory.

Why not ``ru_maxrss``: Linux carries a process's peak RSS across ``fork`` and ``exec`` (the
child starts as a copy of the parent's address space), so a child started from a pytest process
already holding 2.6 GiB reports at least 2.6 GiB, and ``RUSAGE_CHILDREN`` is the largest of every
child the suite ever waited for. ``VmHWM`` in ``/proc/self/status`` is the high-water mark of the
current address space, which ``exec`` replaces: the child's own figure.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# Appended to every measured child: its own peak, as the last line of its output.
_REPORT_PEAK = (
    "\nimport json as _json\nfrom tests.benchmarks.own_process import peak_rss_mib as _peak\n"
    "print(_json.dumps({'peak_rss_mib': _peak()}))\n"
)


def peak_rss_mib() -> float:
    """This process's peak resident memory since it started (``VmHWM``), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status: benchmarks read peak memory the Linux way")


def compile_repository() -> None:
    """The repository's packages compiled to ``__pycache__`` (git-ignored), as pip leaves an
    installed package: under ``PYTHONDONTWRITEBYTECODE=1`` (set on the development machines) a
    cold command would otherwise compile the arena's sources on every run (about 0.1 s CPU) that
    no user pays for."""
    packages = [name for name in ("arena", "agents", "markets", "portfolio") if (ROOT / name).is_dir()]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], cwd=ROOT, check=True)


def run_measured(code: str, *, timeout: float = 600) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter with the repository on the path; return the JSON objects
    it printed (one per line, merged) plus ``peak_rss_mib``, its own peak memory."""
    done = subprocess.run(
        [sys.executable, "-c", code + _REPORT_PEAK],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    figures: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            figures.update(json.loads(line))
    return figures
