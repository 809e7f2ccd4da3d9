"""Hostile text: what a prompt-injected model or a malicious market creator could write.

Every string names ``tracker`` (a loopback server that logs each request it gets), so a test can
prove that rendering it made the browser fetch nothing, and sets ``window.__pwned`` if any
script ever runs. ``SHORT`` strings fit where lengths are limited (a cohort name: 120 chars).
"""

from __future__ import annotations

PWNED = "window.__pwned=1"


def hostile(tracker: str) -> list[str]:
    """Script tags, event handlers, Markdown images and links, ``javascript:`` links, entities,
    Streamlit directives, bidi overrides, NUL, and a 100 KB string."""
    return [
        f'<script>{PWNED};fetch("{tracker}/script")</script>',
        f'<img src="{tracker}/img" onerror="{PWNED}">',
        f"![t]({tracker}/track.png?leak=1)",
        f"[click me]({tracker}/link) and [js](javascript:{PWNED})",
        f'<a href="javascript:{PWNED}">j</a> <svg onload="{PWNED}"></svg>',
        f'<iframe src="{tracker}/iframe"></iframe><object data="{tracker}/object"></object>',
        f'<link rel="stylesheet" href="{tracker}/css"><style>body{{display:none}}</style>',
        f'<div style="background:url({tracker}/css-bg)">styled</div>',
        f"![ref][r]\n\n[r]: {tracker}/ref.png",
        f"bare {tracker}/bare www.example.invalid someone@example.invalid",
        "&lt;b&gt;entity&lt;/b&gt; &amp;amp; &#60;i&#62; &#x3C;u&#x3E;",
        ":red[coloured] :material/warning: $x^2$ **bold** _it_ ~~strike~~ | pipe | `code`",
        "\u202eevil.exe\u202c reversed by an RTL override",
        "NUL \x00 inside",
        "line one\nline two\r\n# heading?\n> quote\n- item",
        "A" * 100_000,
    ]


def short(tracker: str) -> str:
    """One hostile string within 120 characters, for names."""
    return f"<img src={tracker}/n onerror={PWNED}> ![n]({tracker}/n.png)"
