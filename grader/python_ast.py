"""Parsing Python source into an ``ast`` tree, safely beside other threads. Pure.

Every ``ast.parse`` of the grader goes through :func:`parse`. On CPython 3.11 the counter that
guards the depth of the tree being built (``ast2obj``) is shared by the whole interpreter and reset
by every parse. A second parse that starts while the first is still building (in another thread,
or in a finaliser that the garbage collector runs in the middle of the first) makes the first fail
with ``SystemError: AST constructor recursion depth mismatch`` (CPython gh-106905; 3.12 keeps the
counter per call). Python 3.11's own ``traceback`` parses source lines to draw its ``^^^`` marks,
so any thread that formats a traceback (Dask's, while a neighbour worker dies) can set it off.
The tree is never at fault: the same parse, done again, succeeds.
"""

from __future__ import annotations

import ast

ATTEMPTS = 5   # a mismatch needs a parse to start inside ours: two in a row are already rare
_MISMATCH = "AST constructor recursion depth mismatch"


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source, filename)``, done again when another parse ran in the middle of it.
    Raises SyntaxError (and ValueError for a NUL byte) as ``ast.parse`` does."""
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return ast.parse(source, filename=filename)
        except SystemError as error:
            if not str(error).startswith(_MISMATCH) or attempt == ATTEMPTS:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises
