"""``markdown_literal`` renders to exactly its input under a real CommonMark + GFM renderer."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from arena.reports.escaping import markdown_literal, visible_controls, web_address
from tests.safety.corpus import hostile, short

TRACKER = "http://127.0.0.1:9"
# CommonMark with GFM's tables, strikethrough and bare-link detection (linkify).
RENDERER = MarkdownIt("gfm-like")


def _rendered(markdown: str) -> str:
    out = RENDERER.render(markdown).strip()
    assert out.startswith("<p>") and out.endswith("</p>"), out[:200]  # one paragraph, no other block
    inner = out[3:-4]
    assert "<" not in inner, inner[:300]  # no tag at all: no a, img, em, code, del, table...
    return html.unescape(inner)


def _expected(text: str) -> str:
    flat = visible_controls(re.sub(r"[\r\n\t\v\f\x85\u2028\u2029]+", " ", text))
    return flat.strip(" ")  # ends trimmed; any other control is spelt out (NUL as \x00)


@pytest.mark.parametrize("text", [*hostile(TRACKER), short(TRACKER)], ids=lambda t: repr(t[:30]))
def test_every_hostile_string_renders_as_its_own_characters(text: str) -> None:
    assert _rendered(markdown_literal(text, starts_block=True)) == _expected(text)


@settings(max_examples=500)
@example("A.ORG")  # found by hypothesis: a bare domain, which markdown-it's linkify makes a link
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
        lambda t: _expected(t).strip()
    )
)
def test_any_text_renders_as_itself(text: str) -> None:
    # Renderers trim whitespace at a paragraph's ends (which whitespace differs between them);
    # everything between is kept exactly.
    assert _rendered(markdown_literal(text, starts_block=True)).strip() == _expected(text).strip()


def test_numbers_stay_readable_in_the_raw_file() -> None:
    assert markdown_literal("+$525.42 [−1.2, 3.4] 12.5% gpt-4o") == r"+\$525.42 \[−1.2, 3.4\] 12.5% gpt-4o"


def test_bidi_controls_are_spelt_out() -> None:
    assert markdown_literal("\u202eabc") == "\\\\u202eabc"


@pytest.mark.parametrize(
    ("text", "spelt"),
    [
        ("\x1b]0;owned\x07title", r"\\x1b\]0;owned\\x07title"),  # OSC 0: set the terminal's title
        ("\x1b]52;c;aGk=\x07", r"\\x1b\]52;c;aGk=\\x07"),  # OSC 52: write the clipboard
        ("\x1b[2J\x1b[H", r"\\x1b\[2J\\x1b\[H"),  # clear the screen, cursor home
        ("a\x00b\x9bc\x7f", r"a\\x00b\\x9bc\\x7f"),  # NUL, a C1 CSI, DEL
    ],
)
def test_terminal_controls_are_spelt_out_in_the_raw_file(text: str, spelt: str) -> None:
    """report.md is read raw in terminals (``cat``, ``less -R``, a pager): no escape reaches them."""
    assert markdown_literal(text) == spelt


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://polymarket.com/event/x", True),
        ("http://manifold.markets/a/b?c=1", True),
        ("javascript:alert(1)", False),
        ("https://x.com/a)(b", False),
        ("https://x.com/a b", False),
        ("data:text/html,<script>", False),
        ("//no-scheme.example", False),
        ("", False),
        (None, False),
    ],
)
def test_only_plain_web_addresses_become_links(url: str | None, kept: bool) -> None:
    assert web_address(url) == (url if kept else None)


def test_inside_a_line_block_characters_stay_as_they_are() -> None:
    assert markdown_literal("- 12. # x") == "- 12. # x"  # after a label or in a cell: nothing opens
    assert markdown_literal("- 12. # x", starts_block=True) == "\\- 12. # x"
