"""What a notebook's module leaves out of its code cells, and why: the vocabulary shared by the
IPython rules, the statement rules and the reports.

The reader's value types are NamedTuples, not dataclasses: they are created when a notebook check
imports the reader, on the way to the sandbox, and a frozen dataclass costs several times as much
to create (see benchmarks/README.md)."""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple


class DropReason(Enum):
    """Why a line of a code cell is not part of the module the grader imports."""

    CELL_MAGIC = "a cell magic: the cell is not Python"
    CELL_MAGIC_LINE = "a cell magic's line: the code below it is kept"
    LINE_MAGIC = "IPython syntax, not Python"
    D2L_TAB = "D2L's framework tabs: this engine is numpy"
    DEMONSTRATION = "top-level code runs in Jupyter only: definitions, imports and simple assignments are graded"
    CALLS = "an assignment that calls code runs in Jupyter only"
    UNAVAILABLE_IMPORT = "graded code can import only the standard library and numpy"
    DEPENDS_ON_DROPPED = "it uses a name that only a line not graded defines"


class Dropped(NamedTuple):
    """Lines ``line`` to ``end_line`` of a cell (1-based, in the cell) left out, and why."""

    line: int
    end_line: int
    text: str          # the first dropped line, stripped
    reason: DropReason
