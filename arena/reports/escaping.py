"""Text written by models or market creators, made inert for Markdown renderers.

Questions, reasoning, errors, ids and names are data: ``report.md`` and the dashboard's
Markdown-rendering widgets (titles, captions, alerts) must show them exactly as written, never as
a link, an image (which a browser would fetch), HTML or a Streamlit directive. CommonMark lets any
ASCII punctuation be backslash-escaped, and an escaped character is always literal text. We escape
every character that can open an inline construct of CommonMark, GFM, GitHub or Streamlit:
``\\`` escapes, `` ` `` code, ``* _ ~`` emphasis, ``[ ]`` links and images (so also footnotes
and ``:colour[..]`` directives), ``< >`` autolinks and HTML, ``&`` entities, ``|`` table cells,
``$`` math, and the triggers of bare links: ``:`` (``http://``), ``@`` (e-mail addresses,
mentions) and a dot before a letter (GFM's ``www.``, and the bare domains such as ``x.com`` that
renderers with fuzzy link detection find, markdown-it's linkify among them). Other punctuation
(``, - + % ( )``, a dot before a digit) opens nothing in the middle of a line, so numbers stay
readable in the raw file. Newlines are flattened and, where a value
starts a block, its first ``- # > + =`` or ``1.`` is escaped, so no block construct can begin;
other control characters (ESC, NUL, bidirectional overrides...) are spelt out
(``arena.core.controls``), so a value can neither break the layout around it, reverse the text
that follows, nor send a terminal showing the raw file an escape sequence.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from arena.core.controls import visible_controls

_OPENERS = re.compile(r"([\\`*_~\[\]<>&|$:@])|(\.)(?=[^\W\d_])")
# Where a value starts a block (an alert's body, a cell), these would make a list, a heading or a
# quote of it: ``- x``, ``+ x``, ``# x``, ``> x``, ``1. x``, ``1) x``, ``= x``.
_BLOCK_START = re.compile(r"^(\d*)([-+#>=]|(?<=\d)[.)])")
_BREAKS = re.compile(r"[\r\n\t\v\f\x85\u2028\u2029]+")
__all__ = ["markdown_literal", "markdown_text", "streamlit_literal", "visible_controls", "web_address"]


def markdown_literal(text: str, *, starts_block: bool = False) -> str:
    """``text`` as one line of Markdown that renders to exactly its characters. ``starts_block``:
    the value begins a block (an alert's body), where leading spaces are dropped (four would make
    a code block) and a first ``-``, ``#``, ``>``, ``+``, ``=`` or ``1.`` is escaped too; inside a
    line (after a label, in a table cell) those mean nothing and stay readable."""
    line = _OPENERS.sub(lambda m: "\\" + m.group(0), visible_controls(_BREAKS.sub(" ", text)))
    if not starts_block:
        return line
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), line.lstrip(" "), count=1)


# ``markdown_text``: characters escaped wherever they are, and the positions where the others open
# something. ``[ ]`` only matter in a value holding a link or footnote shape (``](``, ``][``,
# ``[^``): with no reference definition in the document, ``[x]`` alone is text.
_ALWAYS = frozenset("\\`*~<|@")
_LINK_SHAPE = re.compile(r"\][(\[]|\[\^")
_POSITIONAL = re.compile(
    r"(?<![^\W_])_|_(?![^\W_])"  # ``_`` not inside a word (intraword underscores open nothing)
    r"|&(?=[#A-Za-z0-9])"  # an entity or character reference
    r"|:(?=/|[\w+-]+:)"  # a link's scheme (``http://``) or an emoji shortcode (``:fire:``)
    r"|\.(?=[^\W\d_])"  # a bare domain (``x.com``, ``www.x``)
    r"|#$"  # an ATX heading's closing sequence
)


def markdown_text(text: str, *, starts_block: bool = False) -> str:
    """``text`` as one line of Markdown that renders to exactly its characters, with as few
    backslashes as that takes: like ``markdown_literal`` for the characters that open something
    wherever they are (``\\ ` * ~ < | @``), but ``_ & : . #``, brackets and ``$`` only where they
    would (``_`` at a word's edge, ``&`` before a name or ``#``, ``:`` before ``/`` or in
    ``:word:``, a dot before a letter, a final ``#``, brackets in a value holding ``](``, ``][`` or
    ``[^``, and ``$`` in a value holding two, which could make math). So ``Cohort report: x``,
    ``00:00 UTC``, ``$1,250.00`` and ``[0.3, 1.2]`` stay as written. For report.md, where a value
    is never parsed as a whole document; Streamlit keeps ``streamlit_literal``."""
    line = visible_controls(_BREAKS.sub(" ", text))
    if starts_block:
        line = line.lstrip(" ")
    brackets = bool(_LINK_SHAPE.search(line))
    dollars = line.count("$") > 1
    marked = {m.start() for m in _POSITIONAL.finditer(line)}
    out = []
    for i, ch in enumerate(line):
        if (
            ch in _ALWAYS
            or i in marked
            or (brackets and ch in "[]")
            or (dollars and ch == "$")
            or (starts_block and i == 0 and ch == "[")
        ):
            out.append("\\")
        out.append(ch)
    escaped = "".join(out)
    if not starts_block:
        return escaped
    return _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2), escaped, count=1)


_AUTOLINK_TRIGGERS = re.compile(r"[:@]|(?<=www)\.", re.IGNORECASE)
WORD_JOINER = "\u2060"


def streamlit_literal(text: str, *, starts_block: bool = False) -> str:
    """``markdown_literal`` for Streamlit, whose renderer finds bare links (``http://``, ``www.``,
    e-mail addresses) by a pattern over the text *after* escapes are resolved, so escaping cannot
    stop it. An invisible word joiner before each ``:`` and ``@`` and after ``www`` breaks those
    patterns; the text reads the same on screen. Only for display: never stored or exported."""
    defused = _AUTOLINK_TRIGGERS.sub(lambda m: WORD_JOINER + m.group(0), text)
    return markdown_literal(defused, starts_block=starts_block)


def web_address(url: str | None) -> str | None:
    """``url`` when it is a plain http(s) address that can stand as a Markdown link target, else
    None: a market's link comes from the venue's data, and ``javascript:`` or a target that breaks
    out of ``(...)`` must never become a link."""
    if not url or any(c.isspace() or c in "()<>\\`\"'" for c in url):
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("http", "https") and parts.netloc else None
