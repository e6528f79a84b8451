"""A ``.py`` submission: the module is the file's text, unchanged."""

from __future__ import annotations

from pathlib import Path

from grader.formats.source import FormatProblem, ModuleSource, ReadContext
from grader.records import record


@record
class PythonFormat:
    """A ``.py`` submission: the file is the module."""

    name: str = "Python file"
    max_file_bytes: int = 1_000_000

    def read(self, path: Path, data: bytes, context: ReadContext) -> ModuleSource:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatProblem(f"{path.name} is not UTF-8 text (byte {error.start}); save it as UTF-8") from None
        return ModuleSource(text, path.name)


PYTHON = PythonFormat()
