"""Control characters in text written by others, spelt out so that they show instead of acting.

Market questions, model names, provider error bodies and agent names reach terminals, reports
and the dashboard. A raw ESC there can retitle the terminal (OSC 0), write the clipboard (OSC 52)
or clear the screen; a CR can overwrite a line; a bidirectional override can reverse the text that
follows. Each such character is shown as its escape (``\\x1b``, ``\\u202e``), never deleted, so the
text keeps every character and a reader sees what was there.
"""

from __future__ import annotations

BIDI_CONTROLS: dict[str, str | int | None] = {
    chr(c): f"\\u{c:04x}" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
}
"""Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), spelt ``\\u202e``."""
LINE_CONTROLS = "\n\t"
"""The two controls left as they are: a newline and a tab lay text out and take over nothing."""
C0_C1_CONTROLS: dict[str, str | int | None] = {
    chr(c): f"\\x{c:02x}"
    for c in (*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0))
    if chr(c) not in LINE_CONTROLS
}
"""ASCII controls, DEL and the C1 controls (0x9B is a CSI on some terminals), spelt ``\\x1b``."""
_SPELL = str.maketrans({**C0_C1_CONTROLS, **BIDI_CONTROLS})


def visible_controls(text: str) -> str:
    """``text`` with every control character but newline and tab spelt out as its escape."""
    return text.translate(_SPELL)
