"""Submission formats: how a file a student hands in becomes the module the sandbox imports.

A format reads the file's bytes (in the grader, never running any of it) and returns a
:class:`ModuleSource`: the Python text to import, the file name its tracebacks show, warnings about
what it changed, and where each of its lines came from. The table maps a file's suffix (compared
case-insensitively) to its format; a new format is one entry here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol


class FormatProblem(Exception):
    """The file cannot become a module; the message is for the student (what, where, what to do)."""


@dataclass(frozen=True)
class ModuleSource:
    text: str                         # the Python source the sandbox imports
    filename: str                     # the name tracebacks and syntax errors show
    warnings: tuple[str, ...] = ()    # what the format dropped or changed, for the student
    # Where a line of ``text`` came from, as a student would find it ("cell 7, line 3"); None: the
    # file's own line numbers are the module's.
    locate: Callable[[int], str] | None = field(default=None, compare=False)


class Format(Protocol):
    name: str
    max_file_bytes: int  # what is read at all; the module text has the submission's own limit

    def read(self, path: Path, data: bytes) -> ModuleSource:
        """The module the file holds, or :class:`FormatProblem`."""
        ...


def _table() -> dict[str, Format]:
    from grader.formats.python import PYTHON
    return {".py": PYTHON}


def format_of(path: Path) -> Format | None:
    """The format of ``path`` by its suffix, or None when it is not a submission format we read."""
    return _table().get(path.suffix.lower())


def suffixes() -> tuple[str, ...]:
    """The suffixes a submission may have, lower case."""
    return tuple(_table())
