"""``markdown_text`` (report.md's escaping) renders to exactly its input under a real CommonMark +
GFM renderer, wherever report.md puts a value, with backslashes only where something would open."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from arena.reports.escaping import markdown_text, visible_controls
from tests.safety.corpus import hostile, short

TRACKER = "http://127.0.0.1:9"
RENDERER = MarkdownIt("gfm-like")  # CommonMark, GFM tables and strikethrough, bare-link detection


def _paragraph(markdown: str) -> str:
    out = RENDERER.render(markdown).strip()
    assert out.startswith("<p>") and out.endswith("</p>"), out[:200]  # one paragraph, no other block
    inner = out[3:-4]
    assert "<" not in inner, inner[:300]  # no tag at all: no a, img, em, code, del...
    return html.unescape(inner)


def _cell(value: str) -> str:
    """The value rendered in a table's only body cell, as report.md's tables place it."""
    out = RENDERER.render(f"| h |\n|---|\n| {value} |\n")
    found = re.search(r"<td>(.*)</td>", out, re.DOTALL)
    assert found is not None, out[:300]
    assert "<" not in found.group(1), found.group(1)[:300]
    return html.unescape(found.group(1))


def _fact(value: str) -> str:
    """The value after a bold label in a list item, as report.md's facts place it."""
    out = RENDERER.render(f"- **k:** {value}\n")
    found = re.fullmatch(r"<ul>\s*<li><strong>k:</strong> ?(.*)</li>\s*</ul>", out.strip(), re.DOTALL)
    assert found is not None, out[:300]
    assert "<" not in found.group(1), found.group(1)[:300]
    return html.unescape(found.group(1))


def _expected(text: str) -> str:
    return visible_controls(re.sub(r"[\r\n\t\v\f\x85\u2028\u2029]+", " ", text)).strip(" ")


@pytest.mark.parametrize("text", [*hostile(TRACKER), short(TRACKER)], ids=lambda t: repr(t[:30]))
def test_every_hostile_string_renders_as_its_own_characters(text: str) -> None:
    assert _paragraph(markdown_text(text, starts_block=True)) == _expected(text)
    assert _cell(markdown_text(text)).strip() == _expected(text).strip()
    assert _fact(markdown_text(text)).strip() == _expected(text).strip()


@settings(max_examples=800)
@example("A.ORG")
@example("a_b_ _c_ *d* ~e~ `f` [g](h) [i][j] [^k] ![l](m) <n> &amp; &#35; $x$ :fire: http://o.p")
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
        lambda t: _expected(t).strip()
    )
)
def test_any_text_renders_as_itself(text: str) -> None:
    assert _paragraph(markdown_text(text, starts_block=True)).strip() == _expected(text).strip()
    assert _cell(markdown_text(text)).strip() == _expected(text).strip()


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("Cohort report: demo-baselines", "Cohort report: demo-baselines"),
        ("2025-09-15 00:00 UTC to 2026-08-19 00:00 UTC", "2025-09-15 00:00 UTC to 2026-08-19 00:00 UTC"),
        ("+$2,572.20", "+$2,572.20"),
        ("25.72% [1.28, 49.10]", "25.72% [1.28, 49.10]"),
        ("demo_baselines gpt-4o claude-sonnet-4.5", "demo_baselines gpt-4o claude-sonnet-4.5"),
        ("![t](http://x)", r"!\[t\](http\://x)"),
        ("see x.com or :fire:", r"see x\.com or \:fire:"),
        ("$5 or $6", r"\$5 or \$6"),
    ],
)
def test_plain_text_keeps_its_characters_and_only_openers_are_escaped(text: str, raw: str) -> None:
    assert markdown_text(text) == raw
