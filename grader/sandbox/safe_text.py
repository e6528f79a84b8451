"""Text from student code, made safe to show: nothing in it can act on a terminal.

Grader side only. Every string that came out of the sandbox (captured output, exception messages,
descriptions of opaque values) goes through :func:`printable` before any reporter sees it.
"""

from __future__ import annotations

import functools
import re


# Characters a terminal acts on instead of printing: C0 controls but tab and newline (ESC starts the
# sequences that clear the screen or move the cursor, CR rewrites a line), DEL, C1, and the bidi
# overrides that reorder what is shown. Student text is shown with these escaped, so it cannot paint
# a fake score over the real one. (Compiled on first use, after the sandbox has its job.)
@functools.cache
def _unprintable() -> re.Pattern:
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@functools.cache
def _surrogates() -> re.Pattern:
    return re.compile("[\ud800-\udfff]")


def storable(text: str, limit: int) -> str:
    """``text`` as the grader may keep and write it: at most ``limit`` characters (and a note
    saying how many more there were), and no lone surrogate (JSON can carry ``"\\ud800"``, which
    no UTF-8 writer accepts: each becomes U+FFFD, the replacement character)."""
    if len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit:,} more characters]"
    if not text.isascii():
        text = _surrogates().sub("\ufffd", text)
    return text


def printable(text: str) -> str:
    """``text`` with every terminal control character written as an escape (``\\x1b``, ``\\u202e``)."""
    return _unprintable().sub(lambda match: repr(match.group())[1:-1], text)
