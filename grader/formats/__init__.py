"""Submission formats: how a file a student hands in becomes the module the sandbox imports.

A format reads the file's bytes (in the grader, never running any of it) and returns a
:class:`ModuleSource`: the Python text to import, the file name its tracebacks show, warnings about
what it changed, and where each of its lines came from. The table maps a file's suffix (compared
case-insensitively) to its format; a new format is one entry here.
"""

from __future__ import annotations

from pathlib import Path

from grader.formats.python import PYTHON
from grader.formats.source import Format, FormatProblem, ModuleSource

__all__ = ["Format", "FormatProblem", "ModuleSource", "format_of", "suffixes"]
_TABLE: dict[str, Format] = {".py": PYTHON}


def format_of(path: Path) -> Format | None:
    """The format of ``path`` by its suffix, or None when it is not a submission format we read."""
    return _TABLE.get(path.suffix.lower())


def suffixes() -> tuple[str, ...]:
    """The suffixes a submission may have, lower case."""
    return tuple(_TABLE)
