"""What a submission format produces: the module a file holds, or the reason it holds none."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


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
    @property
    def name(self) -> str: ...

    @property
    def max_file_bytes(self) -> int:
        """What is read at all; the module text has the submission's own limit."""
        ...

    def read(self, path: Path, data: bytes) -> ModuleSource:
        """The module the file holds, or :class:`FormatProblem`."""
        ...
