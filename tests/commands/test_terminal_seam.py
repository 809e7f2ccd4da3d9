"""Commands reach the terminal only through ``arena.commands.terminal``, so none can forget to
make control characters visible: no ``print``, ``typer.echo``, stream write, rich ``Console``
or ``logging.basicConfig`` anywhere else in the CLI's modules."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SEAM = REPO / "arena" / "commands" / "terminal.py"
CLI_MODULES = sorted([*(REPO / "arena" / "commands").glob("*.py"), REPO / "arena" / "cli.py"])
FORBIDDEN = {
    "print",
    "typer.echo",
    "typer.secho",
    "click.echo",
    "click.secho",
    "sys.stdout.write",
    "sys.stderr.write",
    "Console",
    "rich.console.Console",
    "rich.print",
    "logging.basicConfig",
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.relative_to(REPO)}:{node.lineno}: {_dotted(node.func)}()"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _dotted(node.func) in FORBIDDEN
    ]


def test_only_the_seam_writes_to_the_terminal() -> None:
    assert SEAM in CLI_MODULES and len(CLI_MODULES) > 10
    assert [w for path in CLI_MODULES if path != SEAM for w in _writes(path)] == []


def test_the_check_finds_a_raw_write() -> None:
    """The control: the seam itself writes, and is found by the same check."""
    found = _writes(SEAM)
    assert any("typer.echo()" in w for w in found) and any("logging.basicConfig()" in w for w in found)
