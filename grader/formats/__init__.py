"""Submission formats: how a file a student hands in becomes the module the sandbox imports.

A format reads the file's bytes (in the grader, never running any of it) and returns a
:class:`ModuleSource`: the Python text to import, the file name its tracebacks show, warnings about
what it changed, and where each of its lines came from. The table maps a file's suffix (compared
case-insensitively) to its format; a new format is one entry here. A format's module is imported
only for a file of its suffix (a ``.py`` check never loads the notebook reader).
"""

from __future__ import annotations

from pathlib import Path

from grader.formats.source import Format, FormatProblem, ModuleSource, ReadContext

__all__ = ["Format", "FormatProblem", "ModuleSource", "ReadContext", "format_of", "suffixes"]
# suffix -> (module, name): the format, imported when a file of that suffix is read.
_TABLE = {".py": ("grader.formats.python", "PYTHON"), ".ipynb": ("grader.formats.notebook", "NOTEBOOK")}


def format_of(path: Path) -> Format | None:
    """The format of ``path`` by its suffix, or None when it is not a submission format we read."""
    entry = _TABLE.get(path.suffix.lower())
    if entry is None:
        return None
    import importlib
    found: Format = getattr(importlib.import_module(entry[0]), entry[1])
    return found


def suffixes() -> tuple[str, ...]:
    """The suffixes a submission may have, lower case."""
    return tuple(_TABLE)
