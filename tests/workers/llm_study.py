"""Cohorts of slow LLM agents for the decision-unit fault tests: a fake OpenAI-compatible provider
on loopback that answers after a delay, deterministically from the prompt, so a disturbed run can
be compared with an undisturbed one; and ``arena worker`` processes that run until stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

from tests.fakes.openai_server import RecordedRequest, Reply
from tests.workers.study import ROOT, arena

MARKET = re.compile(r"polymarket:m\d\d")


class SlowProvider:
    """Answers each request after ``delay_s``: a bet of 60 on YES in the first market (by id) its
    prompt names, with a stated probability; or, with ``hold``, no action at all."""

    def __init__(self, delay_s: float, *, hold: bool = False) -> None:
        self.delay_s, self.hold = delay_s, hold

    def __call__(self, request: RecordedRequest) -> Reply:
        markets = sorted(set(MARKET.findall(json.dumps(request.body))))
        if self.hold or not markets:
            answer: dict[str, object] = {"reasoning": "holding", "actions": [], "probabilities": {}}
        else:
            bet = {"type": "bet", "market_id": markets[0], "outcome": "YES", "amount": 60}
            answer = {"reasoning": "cheap", "actions": [bet], "probabilities": {markets[0]: 0.6}}
        return Reply.ok(json.dumps(answer), delay_s=self.delay_s, cost=0.001)


def llm_agents(base_url: str, count: int) -> str:
    """TOML for ``count`` LLM agents served at ``base_url`` (no key; cutoff before the data)."""
    return "".join(
        f'\n[[agents]]\nname = "llm-{i}"\nkind = "llm"\nmodel = "fake/model"\nbase_url = "{base_url}"\n'
        'api_key_env = ""\ntimeout_s = 30\nknowledge_cutoff = "2024-12-01"\n'
        for i in range(count)
    )


def llm_study_config(path: Path, dataset: Path, base_url: str, *, name: str, agents: int = 4) -> Path:
    """A replay cohort of ``agents`` LLM agents and two baselines, a round every 4 days, without a
    tournament hidden period (the fake LLM bets on every market it is offered: a hidden price
    would make those bets invalid answers)."""
    baselines = "".join(f'\n[[agents]]\nname = "{k}"\nkind = "{k}"\n' for k in ("favorite", "random"))
    path.write_text(
        f'name = "{name}"\nseed = 3\ndataset = "{dataset}"\nstart = "2025-01-01T00:00:00Z"\n'
        'call_timeout = "20s"\nround_budget = "40s"\n'
        '\n[schedule]\nevery = "4d"\n'
        '\n[universe]\nmax_markets = 6\nmin_price = "0.01"\nmax_price = "0.99"\n'
        "\n[tournament]\nhidden_fraction = 0\n" + baselines + llm_agents(base_url, agents),
        encoding="utf-8",
    )
    return path


def start(*args: str, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """An arena command in a process of its own, its output to ``log``."""
    with log.open("wb") as out:
        return subprocess.Popen(
            arena(*args),
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def start_worker(
    db_url: str, log: Path, *, lease: float = 2, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """An ``arena worker`` that runs until stopped (rounds come one after another); ``env``: the
    venues' URLs, when it may take ``arena serve``'s sync units."""
    return start("worker", "--database-url", db_url, "--lease", str(lease), "--poll", "0.2", log=log, env=env)


def stop(proc: subprocess.Popen[bytes]) -> int:
    """SIGINT (after SIGCONT, if paused); SIGKILL if it does not stop within 30 s."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGCONT)
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode
