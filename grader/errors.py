"""Typed errors of the grader library. The CLI turns each into one ``Error: ...`` line."""

from __future__ import annotations


class GraderError(Exception):
    """Base class: an error a user can act on (not a bug in the grader)."""


class SpecError(GraderError):
    """The assignment spec or a scenario file is wrong. Says where: file, line, field."""

    def __init__(self, file: str, line: int | None, field: str | None, message: str):
        self.file, self.line, self.field, self.message = file, line, field, message
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {field}: {message}" if field else f"{where}: {message}")


class UsageError(GraderError):
    """The command was asked for something that cannot be done (a missing file, a bad option)."""
