"""What a submission format produces: the module a file holds, or the reason it holds none."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from grader.records import record

if TYPE_CHECKING:
    from grader.spec import Plan
    from grader.spec_cache import SpecCache


class FormatProblem(Exception):
    """The file cannot become a module; the message is for the student (what, where, what to do)."""


@record
class ModuleSource:
    """What a submission format makes of a file: the module the sandbox imports, and where its lines came from."""

    text: str                         # the Python source the sandbox imports
    filename: str                     # the name tracebacks and syntax errors show
    warnings: tuple[str, ...] = ()    # what the format dropped or changed, for the student
    # Where a line of ``text`` came from, as a student would find it ("cell 7, line 3"); None: the
    # file's own line numbers are the module's.
    locate: Callable[[int], str] | None = field(default=None, compare=False)


@record
class ReadContext:
    """What a format may need to know of the assignment it reads a submission for."""

    assignment: str | None = None          # its id: a notebook names the assignment it belongs to
    forbidden: tuple[str, ...] = ()        # its forbidden imports (a notebook keeps those it would drop)
    forbidden_reason: str = ""             # why they are, in the exercise's words (assignment.yaml)
    # Which notebook statements are graded: "definitions" (the default) or "all" (every cell, as
    # "Run All"): assignment.yaml's `notebook_cells`.
    notebook_cells: str = "definitions"
    # A cache the grader trusts (grader check's, see checking.trusted_cache), or None: compute.
    cache: SpecCache | None = field(default=None, compare=False)

    @classmethod
    def of(cls, plan: Plan, cache: SpecCache | None = None) -> ReadContext:
        """What ``plan``'s submissions are read with."""
        return cls(assignment=plan.id, forbidden=plan.forbidden_imports, forbidden_reason=plan.forbidden_reason,
                   notebook_cells=plan.notebook_cells, cache=cache)


_LINE_BREAK = re.compile(r"\r\n?|\n")   # the line breaks Python's tokenizer counts (\f and \v are not)


def syntax_error_excerpt(error: SyntaxError, source: str) -> str:
    """The line of a syntax error in ``source`` (the text that was compiled) and a caret under its
    column, indented ("" when the error names no line of it).

    The line is taken from ``source``, never from ``error.text``: for a file name, CPython fills
    ``text`` by reading that name from the disk, so a notebook's error would quote a line of the
    ``.ipynb``'s JSON, and a module named ``autodiff.py`` a line of whatever ``autodiff.py`` lies
    in the current folder."""
    lines = _LINE_BREAK.split(source)
    if not error.lineno or not 0 < error.lineno <= len(lines) or not lines[error.lineno - 1].strip():
        return ""
    line = lines[error.lineno - 1]
    stripped = line.lstrip()
    caret = max((error.offset or 1) - 1 - (len(line) - len(stripped)), 0)
    return f"\n    {stripped}\n    {' ' * caret}^"


class Format(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def max_file_bytes(self) -> int:
        """What is read at all; the module text has the submission's own limit."""
        ...

    def read(self, path: Path, data: bytes, context: ReadContext) -> ModuleSource:
        """The module the file holds, or :class:`FormatProblem`."""
        ...
