"""User text on its way to a terminal or a plot, rendered literally (issue 18).

Names, descriptions, price sources, model names and paths come from input files. Printed through
rich they would be read as markup (`[/]` raises, `[link=…]` makes a hyperlink); written raw, an
escape sequence (CSI `ESC[…`, OSC `ESC]…`) would drive the terminal, even through a pipe read
later; drawn by matplotlib, `$…$` would be parsed as mathtext. These functions neutralise each.
"""
from __future__ import annotations

import re

# C0 controls except tab and newline, DEL, C1 controls, and the Unicode bidirectional overrides
# and isolates (they reorder what the terminal shows).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _visible(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def plain(text: object) -> str:
    """The text with every terminal control character shown as its escape (ESC → `\\x1b`)."""
    return _CONTROL.sub(_visible, str(text))


def safe(text: object) -> str:
    """User text for rich: control characters made visible, then markup escaped (printed as is). rich is imported
    here, on first use: `fabricplan --help` prints through argparse and loads none of it (0.01 s of its 0.15 s)."""
    from rich.markup import escape

    return escape(plain(text))


def literal_for_plot(text: object) -> str:
    """User text for matplotlib: control characters made visible and `$` escaped, so no mathtext
    is parsed (an unescaped pair of `$` would be, and a malformed one raises)."""
    return plain(text).replace("$", r"\$")


def quiet_plotting(write):
    """Run a plot writer with Python warnings silenced: matplotlib's glyph-missing and font warnings
    repeated the user's text (raw control bytes included) on stderr (issue 27)."""
    import functools
    import warnings

    @functools.wraps(write)
    def quiet(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return write(*args, **kwargs)

    return quiet
