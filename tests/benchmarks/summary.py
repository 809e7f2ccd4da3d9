"""Render the stored benchmark results as the table of ``docs/benchmarks.md``.

``python -m tests.benchmarks.summary`` rewrites the table between the page's markers;
``--check`` exits 1 when the page is out of step with ``tests/benchmarks/results/``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.benchmarks.results import load_all

PAGE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"


def _number(value: float) -> str:
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.3g}".rstrip(".")


def _met(figure: dict[str, object]) -> str:
    target = figure.get("target")
    if not target:
        return "—"
    met = figure.get("met")
    return f"{target} ({'met' if met else 'not met' if met is False else 'see note'})"


def table() -> str:
    """The results as one Markdown table: benchmark, figure, value, floor, ratio, target."""
    lines = [
        "| benchmark | figure | value | floor | ratio | target | machine, date |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in load_all():
        machine = result["machine"]
        assert isinstance(machine, dict)
        where = f"{machine['cores']} cores, load {machine['load_average']}, {result['date']}"
        figures = result["figures"]
        assert isinstance(figures, list)
        for figure in figures:
            unit = figure["unit"]
            floor, ratio = figure.get("floor"), figure.get("ratio")
            lines.append(
                f"| `{result['benchmark']}` | {figure['what']} | {_number(figure['value'])} {unit} | "
                f"{'—' if floor is None else f'{_number(floor)} {unit}'} | "
                f"{'—' if ratio is None else f'{ratio:.2f}×'} | {_met(figure)} | {where} |"
            )
    return "\n".join(lines)


def rendered(page: str) -> str:
    """``page`` with the text between the markers replaced by the current table."""
    head, rest = page.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


def main(argv: list[str]) -> int:
    page = PAGE.read_text(encoding="utf-8")
    new = rendered(page)
    if "--check" in argv:
        return int(new != page)
    PAGE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
