"""The faults of the soak benchmark: a venue fake with timed spells of errors or stalls, a
timeline of events run on a thread, and a resident-memory sampler of the arena processes.

Kept apart from ``test_bench_soak`` so that module reads as the run and its checks.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

from tests.fakes.polymarket_server import FakePolymarket
from tests.fakes.standalone import ADMIN
from tests.fakes.venue_server import Fault


class SpellVenue(FakePolymarket):
    """A fake Polymarket that, while ``spell`` is set, answers every venue request (not the admin
    API) with that fault: an HTTP error, or a stall longer than the client's timeout."""

    def __init__(self) -> None:
        super().__init__()
        self.spell: Fault | None = None
        self.faulted = 0  # requests answered with a spell's fault

    def respond(self, method: str, target: str, raw_body: bytes) -> tuple[int, dict[str, str], bytes]:
        spell = self.spell
        if spell is None or urlsplit(target).path.startswith(ADMIN):
            return super().respond(method, target, raw_body)
        with self.lock:
            self.faulted += 1
        time.sleep(spell.delay)
        if spell.status is not None:
            return spell.status, {}, json.dumps({"error": f"injected HTTP {spell.status}"}).encode()
        return super().respond(method, target, raw_body)  # a stall: answered, too late

    def move_prices(self, rng: random.Random, count: int) -> None:
        """``count`` open markets' YES prices move by up to 3 cents, inside (0.05, 0.95)."""
        with self.lock:
            open_ids = sorted(g for g, m in self.markets.items() if not m.get("closed"))
        for gamma_id in rng.sample(open_ids, min(count, len(open_ids))):
            yes = Decimal(json.loads(self.markets[gamma_id]["outcomePrices"])[0])
            step = Decimal(rng.randint(-3, 3)) / 100
            self.set_price(gamma_id, min(max(yes + step, Decimal("0.05")), Decimal("0.95")))


@dataclass
class Timeline:
    """Events at offsets (seconds) from a start, run in order on a thread; each one done is
    logged with its wall time, and ``windows`` keeps the (start, end) of named spells."""

    start: float  # time.time() of offset 0
    events: list[tuple[float, str, Callable[[], None]]] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    windows: dict[str, list[tuple[datetime, datetime]]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)

    def at(self, offset: float, what: str, action: Callable[[], None]) -> None:
        self.events.append((offset, what, action))

    def spell(
        self, offset: float, length: float, what: str, on: Callable[[], None], off: Callable[[], None]
    ) -> None:
        """``on`` at ``offset``, ``off`` ``length`` seconds later; the window is kept under ``what``."""
        begin = datetime.fromtimestamp(self.start + offset, UTC)
        end = datetime.fromtimestamp(self.start + offset + length, UTC)
        self.windows.setdefault(what, []).append((begin, end))
        self.at(offset, f"{what} begins", on)
        self.at(offset + length, f"{what} ends", off)

    def run(self) -> threading.Thread:
        thread = threading.Thread(target=self._run, name="soak-timeline", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        for offset, what, action in sorted(self.events, key=lambda e: e[0]):
            if self._stop.wait(max(0.0, self.start + offset - time.time())):
                return
            try:
                action()
                self.log.append(f"{datetime.now(UTC):%H:%M:%S} {what}")
            except Exception as exc:  # a failed fault is reported, the run goes on
                self.log.append(f"{datetime.now(UTC):%H:%M:%S} {what}: FAILED {exc!r}")


class RssSampler:
    """Samples each process's resident memory (``/proc/PID/status`` VmRSS) every ``every`` seconds."""

    def __init__(self, pids: dict[str, int], every: float) -> None:
        self.pids, self.every = pids, every
        self.samples: dict[str, list[int]] = {name: [] for name in pids}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="soak-rss", daemon=True)

    def start(self) -> RssSampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            for name, pid in self.pids.items():
                kib = status_kib(pid, "VmRSS")
                if kib is not None:
                    self.samples[name].append(kib)

    def growth(self, name: str) -> tuple[float, float]:
        """(mean RSS of the last quarter of samples, mean of the first quarter), in MiB."""
        samples = self.samples[name]
        quarter = max(1, len(samples) // 4)
        return sum(samples[-quarter:]) / quarter / 1024, sum(samples[:quarter]) / quarter / 1024


def status_kib(pid: int, key: str) -> int | None:
    """A ``kB`` field of ``/proc/PID/status`` (VmRSS, VmHWM), or None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(f"{key}:"):
            return int(line.split()[1])
    return None
