"""Where a line of a notebook's module came from: a cell (its number and id) and a line in it.

The module the grader imports is the kept code cells one after the other, each line where it is
in its cell, so a module line maps back by a lookup; feedback (syntax errors, tracebacks, "you
changed the provided engine") says ``autodiff.ipynb, cell 7, line 3`` instead of a line of a file
the student never saw.
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import re


class CellLine(NamedTuple):
    """A line of a notebook: ``cell`` is the cell's position among all cells (1-based, markdown
    cells counted, as Jupyter and VS Code number them), ``cell_id`` its nbformat id (None before
    nbformat 4.5), ``line`` the line in the cell (1-based)."""

    cell: int
    cell_id: str | None
    line: int

    def describe(self, notebook: str) -> str:
        """``autodiff.ipynb, cell 7, line 3``."""
        return f"{notebook}, cell {self.cell}, line {self.line}"


class Segment(NamedTuple):
    """Module lines ``start`` to ``start + length - 1`` (1-based) are the lines of one cell."""

    start: int
    length: int
    cell: int
    cell_id: str | None


class LineMap(NamedTuple):
    segments: tuple[Segment, ...]

    def locate(self, module_line: int) -> CellLine | None:
        """The cell line a module line came from (None outside every cell)."""
        starts = [segment.start for segment in self.segments]
        at = bisect.bisect_right(starts, module_line) - 1
        if at < 0:
            return None
        segment = self.segments[at]
        offset = module_line - segment.start
        return CellLine(segment.cell, segment.cell_id, offset + 1) if offset < segment.length else None

    def module_line(self, cell: int, line: int) -> int | None:
        """The module line of a cell's line (None when that cell is not in the module)."""
        segment = next((s for s in self.segments if s.cell == cell), None)
        return None if segment is None or not 0 < line <= segment.length else segment.start + line - 1


_FRAME = r'^(?P<indent>\s*)File "(?P<file>[^"]+)", line (?P<line>\d+)(?P<rest>.*)$'  # a traceback's frame line


def relocate_traceback(traceback: str, module_file: str, where) -> str:
    """``traceback`` with each ``File "<module_file>", line N`` frame line saying where line N came
    from: ``where(N)`` (e.g. ``File "autodiff.ipynb", cell 7, line 3, in detach``); frames of other
    files, and lines ``where`` does not know (None), stay as they are."""

    def relocated(match: re.Match[str]) -> str:
        if match["file"] != module_file:
            return match[0]
        place = where(int(match["line"]))
        if place is None:
            return match[0]
        notebook, _, rest = place.partition(", ")
        return f'{match["indent"]}File "{notebook}", {rest}{match["rest"]}'
    import re
    return re.sub(_FRAME, relocated, traceback, flags=re.MULTILINE)
