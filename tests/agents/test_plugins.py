"""Bring-your-own-bot plug-ins: by import path, by entry point, and the errors users will meet."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path

import pytest

from agents.plugins import ENTRY_POINT_GROUP, PluginError, instantiate, load_by_entry_point, load_by_path
from agents.types import Bettor
from tests.agents.test_baselines_builders import bets, decide, entry, pm, view

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def example_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``plugin_example`` importable the way a user's installed package would be."""
    monkeypatch.syspath_prepend(str(HERE))


@pytest.fixture
def installed_entry_point(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Register the example's entry point through real distribution metadata on sys.path."""
    dist = tmp_path / "plugin_example-0.1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-example\nVersion: 0.1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\ncheap-yes = plugin_example.bettor:CheapYesBettor\n"
        "broken = plugin_example.bettor:NoSuchClass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))


def _build(path: str, settings: Mapping[str, object] | None = None) -> Bettor:
    return instantiate(load_by_path(path), f"plugin {path!r}", name="mine", settings=settings or {}, seed=11)


def test_plugin_by_path_gets_name_settings_and_seed_and_decides() -> None:
    bettor = _build("plugin_example.bettor:CheapYesBettor", {"threshold": 0.4, "stake": 80})
    assert isinstance(bettor, Bettor) and bettor.name == "mine"
    assert bettor.seed == 11  # type: ignore[attr-defined]
    decision = decide(bettor, view(entry("a", "0.35"), entry("b", "0.45")))
    assert bets(decision) == [(pm("a"), "YES", Decimal(80))]


def test_plugin_by_entry_point(installed_entry_point: None) -> None:
    factory = load_by_entry_point("cheap-yes")
    bettor = instantiate(factory, "plugin entry point 'cheap-yes'", name="ep", settings={}, seed=0)
    assert bets(decide(bettor, view(entry("a", "0.2")))) == [(pm("a"), "YES", Decimal(100))]


def test_unknown_entry_point_lists_the_installed_ones(installed_entry_point: None) -> None:
    with pytest.raises(
        PluginError,
        match=r"'nope' not found in group 'bettor_arena.bettors' \(available: broken, cheap-yes\)",
    ):
        load_by_entry_point("nope")
    with pytest.raises(
        PluginError, match=r"plugin entry point 'broken' \(plugin_example.bettor:NoSuchClass\): cannot load"
    ):
        load_by_entry_point("broken")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("plugin_example.bettor", "expected 'package.module:ClassName'"),
        ("no_such_pkg.bot:Bot", "cannot import module 'no_such_pkg.bot': No module named 'no_such_pkg'"),
        ("plugin_example.bettor:Missing", "module 'plugin_example.bettor' has no attribute 'Missing'"),
        (
            "plugin_example.explodes:Bot",
            "importing 'plugin_example.explodes' raised RuntimeError: cannot reach",
        ),
        ("plugin_example.broken:NOT_CALLABLE", "is a int, expected a Bettor class or factory"),
        ("plugin_example.broken:SyncDecide", "class has no 'async def decide(self, view)' method"),
    ],
)
def test_load_errors_name_the_path_and_the_problem(path: str, message: str) -> None:
    with pytest.raises(PluginError) as raised:
        load_by_path(path)
    assert message in str(raised.value) and repr(path) in str(raised.value)


@pytest.mark.parametrize(
    ("path", "settings", "message"),
    [
        ("plugin_example.broken:NoUsesPeers", {}, "is not a Bettor: missing 'uses_peers' (bool) attribute"),
        ("plugin_example.broken:OwnName", {}, "'name' is 'something-else' but the agent is called 'mine'"),
        (
            "plugin_example.broken:RejectsSettings",
            {"level": 5},
            "rejected its settings: ValueError: level must be at most 3",
        ),
        (
            "plugin_example.broken:RejectsSettings",
            {"levle": 2},
            "settings do not fit RejectsSettings(name, level=1): got an unexpected keyword argument 'levle'",
        ),
        ("plugin_example.bettor:CheapYesBettor", {"name": "x"}, "settings may not set ['name']"),
    ],
)
def test_instantiation_errors_say_what_is_missing(
    path: str, settings: dict[str, object], message: str
) -> None:
    with pytest.raises(PluginError) as raised:
        _build(path, settings)
    assert message in str(raised.value) and repr(path) in str(raised.value)


CHEAP_YES = """
from agents.types import Decision


class CheapYes:
    uses_peers = False

    def __init__(self, name: str) -> None:
        self.name = name

    async def decide(self, view):
        return Decision(actions=(), probabilities={}, reasoning="")
"""


def test_a_plugin_in_the_current_folder_says_how_to_make_it_importable(tmp_path: Path) -> None:
    """`arena` (the installed script) does not look in the folder it runs from: the one-line
    error says to run with PYTHONPATH=. (or install the module), and that then works."""
    (tmp_path / "mybot.py").write_text(CHEAP_YES, encoding="utf-8")
    (tmp_path / "c.toml").write_text(
        'name = "mine"\nstart = 2025-09-15T00:00:00Z\n[schedule]\nrounds = 1\n'
        '[[agents]]\nname = "cheap"\nkind = "plugin"\npath = "mybot:CheapYes"\n',
        encoding="utf-8",
    )
    arena = Path(sys.executable).with_name("arena")
    command = [str(arena), "cohort", "launch", "c.toml", "--database-url", f"sqlite:///{tmp_path / 'a.db'}"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    refused = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
    assert "cannot import module 'mybot': No module named 'mybot'" in refused.stderr
    assert "run arena with PYTHONPATH=. from the folder holding mybot.py" in refused.stderr
    launched = subprocess.run(
        command, cwd=tmp_path, env={**env, "PYTHONPATH": "."}, capture_output=True, text=True, check=False
    )
    assert launched.returncode == 0, launched.stderr


def test_a_module_missing_a_dependency_gets_no_path_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "needs_dep.py").write_text("import no_such_dependency_xyz\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError) as raised:
        load_by_path("needs_dep:Bot")
    assert "No module named 'no_such_dependency_xyz'" in str(raised.value)
    assert "PYTHONPATH" not in str(raised.value)
