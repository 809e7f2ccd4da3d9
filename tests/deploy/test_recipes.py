"""The service recipes under ``deploy/`` say what they mean: every ``arena`` command line in a
systemd unit, the compose file and the Containerfile parses against the real CLI (command and
options, with their types and ranges), every ``ARENA_*`` variable they set is a setting the arena
reads and accepts, and the files are well formed (systemd keys known in their sections, compose
services that depend on services that exist). No container engine or systemd runs here."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from arena.cli import load
from arena.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
UNITS = sorted((DEPLOY / "systemd").glob("*.service")) + sorted((DEPLOY / "systemd").glob("*.timer"))
# The keys these recipes may use, by section: a misspelt key (systemd only warns) fails here.
KNOWN = {
    "Unit": {"Description", "Documentation", "Wants", "After", "Requires"},
    "Service": {
        *("Type", "User", "Group", "WorkingDirectory", "EnvironmentFile", "ExecStart"),
        *("KillSignal", "TimeoutStopSec", "Restart", "RestartSec", "RestartPreventExitStatus"),
        *("NoNewPrivileges", "PrivateTmp", "ProtectSystem", "ProtectHome", "ReadWritePaths"),
    },
    "Timer": {"OnCalendar", "Persistent", "RandomizedDelaySec"},
    "Install": {"WantedBy"},
}
VALUES = {
    "Type": {"simple", "exec", "oneshot"},
    "Restart": {"no", "on-failure", "always"},
    "KillSignal": {"SIGTERM", "SIGINT"},
    "NoNewPrivileges": {"yes"},
    "ProtectSystem": {"strict", "full", "yes"},
}


def parse_unit(path: Path) -> dict[str, dict[str, list[str]]]:
    """A systemd unit file: section -> key -> values (a key may repeat). Refuses what systemd
    would not read: a line outside a section, a line that is not ``key=value``."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if match := re.fullmatch(r"\[(\w+)\]", line):
            current = sections.setdefault(match.group(1), {})
            continue
        key, sep, value = line.partition("=")
        assert current is not None and sep and re.fullmatch(r"[A-Za-z]+", key), (
            f"{path.name}:{number}: {raw!r}"
        )
        current.setdefault(key, []).append(value.strip())
    return sections


def arena_context(args: list[str]) -> Any:
    """Parse ``arena ARGS`` as the CLI would (command path, options, their types and ranges);
    raises click's ``UsageError`` (or ``BadParameter``) when it would refuse them."""
    command, rest = load(args[0]), list(args[1:])
    path = [args[0]]
    while hasattr(command, "commands") and rest and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    assert not hasattr(command, "commands"), f"arena {' '.join(args)}: no such command"
    return command.make_context(" ".join(["arena", *path]), rest)


def check_settings(values: dict[str, str]) -> None:
    """Every ``ARENA_*`` variable is a setting the arena reads, and all of them together are valid."""
    fields = {f"ARENA_{name.upper()}" for name in Settings.model_fields}
    arena = {k: v for k, v in values.items() if k.startswith("ARENA_")}
    assert set(arena) <= fields, sorted(set(arena) - fields)
    try:
        Settings(**{k.removeprefix("ARENA_").lower(): v for k, v in arena.items()})  # type: ignore[arg-type]
    except ValidationError as exc:
        raise AssertionError(f"invalid settings {arena}: {exc}") from exc


@pytest.mark.parametrize("path", UNITS, ids=[p.name for p in UNITS])
def test_systemd_units_are_well_formed_and_run_real_arena_commands(path: Path) -> None:
    unit = parse_unit(path)
    assert set(unit) <= set(KNOWN) and "Unit" in unit and unit["Unit"]["Description"]
    for section, keys in unit.items():
        assert set(keys) <= KNOWN[section], (section, set(keys) - KNOWN[section])
        for key, values in keys.items():
            assert all(v in VALUES[key] for v in values) if key in VALUES else True, (key, values)
    if path.suffix == ".timer":
        assert (path.with_suffix(".service")).exists() and unit["Install"]["WantedBy"] == ["timers.target"]
        return
    service = unit["Service"]
    (exec_start,) = service["ExecStart"]
    binary, *args = shlex.split(exec_start)
    assert binary.startswith("/") and binary.endswith("/bin/arena")
    arena_context(args)  # raises if the command or an option is wrong
    assert service["EnvironmentFile"] == ["/etc/arena/arena.env"] and service["User"] == ["arena"]
    if service["Type"] != ["oneshot"]:
        assert service["Restart"] == ["on-failure"] and "2" in service["RestartPreventExitStatus"][0].split()
        assert unit["Install"]["WantedBy"] == ["multi-user.target"]


def test_the_environment_file_example_holds_valid_settings() -> None:
    lines = (DEPLOY / "systemd" / "arena.env.example").read_text(encoding="utf-8").splitlines()
    values = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert "ARENA_DATABASE_URL" in values
    check_settings(values)


def _compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))


def _interpolated(value: str) -> str:
    """Compose's ``${VAR:-default}`` / ``${VAR:?error}`` with the default, or a stand-in value."""
    return re.sub(r"\$\{(\w+)(?::-([^}]*)|:\?[^}]*)?\}", lambda m: m.group(2) or "x", value)


def test_compose_runs_postgres_a_migration_serve_workers_and_the_dashboard() -> None:
    services = _compose()["services"]
    assert set(services) == {"postgres", "migrate", "serve", "worker", "dashboard"}
    arena = {name: s for name, s in services.items() if s.get("image") == "bettor-arena:latest"}
    assert set(arena) == {"migrate", "serve", "worker", "dashboard"}
    commands = {name: s["command"] for name, s in arena.items()}
    assert commands["migrate"] == ["db", "upgrade"]
    assert [c[0] for c in commands.values()] == ["db", "serve", "worker", "dashboard"]
    for service in arena.values():
        arena_context(service["command"])
        build = service["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Containerfile"
        env = {k: _interpolated(str(v)) for k, v in service["environment"].items()}
        assert (
            env["ARENA_DATABASE_URL"].startswith("postgresql://arena:")
            and "@postgres:5432/arena" in env["ARENA_DATABASE_URL"]
        )
        check_settings(env)
        for dependency in service.get("depends_on", {}):
            assert dependency in services
    assert arena["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    for name in ("serve", "worker", "dashboard"):  # nothing starts before the schema is current
        assert arena[name]["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
    assert arena["worker"]["deploy"]["replicas"] >= 2
    health = arena["serve"]["healthcheck"]["test"]
    assert health[:2] == ["CMD", "arena"] and arena_context(health[2:]).info_name == "arena status"
    metrics_port = commands["serve"][commands["serve"].index("--metrics-port") + 1]
    assert any(p.endswith(f":{metrics_port}") for p in arena["serve"]["ports"])


def test_the_containerfile_builds_the_package_and_runs_arena() -> None:
    lines = (DEPLOY / "Containerfile").read_text(encoding="utf-8").splitlines()
    instructions = [line for line in lines if line and not line.startswith(("#", " "))]
    words = [line.split()[0] for line in instructions]
    assert words[0] == "FROM" and "USER" in words and words[words.index("USER") + 1 :].count("RUN") == 0
    for line in instructions:
        if line.startswith("COPY "):
            *sources, _target = line.split()[1:]
            assert all((ROOT / source).exists() for source in sources), line
    text = "\n".join(lines)
    assert "pip install --constraint constraints.txt ." in text
    assert 'ENTRYPOINT ["arena"]' in text
    packages = {p.split("*")[0] for p in re.findall(r'"(\w+)\*"', (ROOT / "pyproject.toml").read_text())}
    copied = {line.split()[1] for line in instructions if line.startswith("COPY ") and len(line.split()) == 3}
    assert packages <= copied, packages - copied  # every package the wheel includes is in the image
