"""IPython-only syntax in a notebook's code cell, turned into plain Python by a fixed rule.

The grader never runs a kernel, so what only IPython understands is taken out of a cell before it
is parsed, always the same way and never silently (each removal is a :class:`Dropped`):

* a **cell magic** on the cell's first line (``%%...``): ``%%time``, ``%%timeit``, ``%%capture``
  and D2L's ``%%tab all`` only observe a Python body, so the magic line is dropped and the body
  kept; every other cell magic (``%%tab pytorch``, ``%%bash``, ``%%writefile``, ``%%html``...)
  drops the whole cell, whose body is not Python for this engine;
* a **line magic** or **shell command** at the start of a statement (``%pip install d2l``,
  ``%matplotlib inline``, ``%load_ext d2lbook.tab``, ``!pip install d2l==1.0.3``,
  ``files = !ls``), and IPython **help** (``Tensor?``, ``??detach``): the line is dropped.

A dropped line keeps its place (a blank line, or ``pass`` inside a block), so every line left has
the number it has in the cell. Where a line starting with ``%`` or ``!`` sits inside brackets or a
string (Python, not IPython), it stays.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from grader.formats.dropped import Dropped, DropReason

# Cell magics whose body is Python that they only time or capture: the body is kept.
_OBSERVING_CELL_MAGICS = frozenset({"time", "timeit", "capture"})
_CELL_MAGIC = re.compile(r"^%%(?P<name>\w+)(?P<args>.*)$")
_LINE_MAGIC = re.compile(
    r"^(?P<indent>[ \t]*)(?:[%!]|\?"                                   # %magic, %%x, !cmd, ?name
    r"|[A-Za-z_][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*[ \t]*=[ \t]*[%!]"  # x = %magic, x = !cmd
    r"|[A-Za-z_][\w.]*\?\??[ \t]*$)")                                   # name?, name??


class CellText(NamedTuple):
    """A code cell's source after the IPython rules: ``lines`` (each ending in a newline, one per
    line of the cell), or ``None`` for a cell dropped whole."""

    lines: tuple[str, ...] | None
    dropped: tuple[Dropped, ...]


def strip_ipython(source: str) -> CellText:
    """Apply the rules above to one code cell's source."""
    lines = [line if line.endswith("\n") else line + "\n" for line in source.splitlines()]
    dropped: list[Dropped] = []
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].startswith("%%"):
        magic = _CELL_MAGIC.match(lines[first].rstrip())
        name, args = (magic["name"], magic["args"].replace(",", " ").split()) if magic else ("", [])
        if name in _OBSERVING_CELL_MAGICS or (name == "tab" and "all" in args):
            dropped.append(Dropped(first + 1, first + 1, lines[first].strip(), DropReason.CELL_MAGIC_LINE))
            lines[first] = "\n"
        else:
            reason = DropReason.D2L_TAB if name == "tab" else DropReason.CELL_MAGIC
            return CellText(None, (Dropped(first + 1, len(lines), lines[first].strip(), reason),))
    candidates = {i for i, line in enumerate(lines) if _LINE_MAGIC.match(line)}
    for index in sorted(_at_statement_starts(lines, candidates)):
        indent = _indent(lines[index])
        dropped.append(Dropped(index + 1, index + 1, lines[index].strip(), DropReason.LINE_MAGIC))
        lines[index] = f"{indent}pass\n" if indent else "\n"  # a block keeps a statement
    return CellText(tuple(lines), tuple(dropped))


def _at_statement_starts(lines: list[str], candidates: set[int]) -> set[int]:
    """The candidate lines (0-based) that start a statement, so are IPython syntax. A candidate
    starts one when the cell's lines before it (the magics found so far put in as ``pass``)
    tokenize to a complete statement: not inside brackets, a string or after a backslash, where
    a line starting with ``%`` or ``!`` is Python."""
    starts: set[int] = set()
    probe = list(lines)
    for index in sorted(candidates):
        if _complete("".join(probe[:index])):
            starts.add(index)
            probe[index] = f"{_indent(lines[index])}pass\n"
    return starts


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t"))]


def _complete(text: str) -> bool:
    """Whether ``text`` ends between two statements."""
    import io
    import tokenize  # only for a cell with a candidate line: its import compiles big patterns
    try:
        for _ in tokenize.generate_tokens(io.StringIO(text).readline):
            pass
    except tokenize.TokenError:   # EOF inside brackets, a string or a continuation
        return False
    except SyntaxError:           # not Python before this line: its error is reported when the cell is parsed
        return True
    return True
