"""Edits of a source text: what an operator's mutant changes, spliced into the reference. Pure.

An edit replaces the text between two (line, column) positions (ast's: 1-based lines, 0-based UTF-8
byte columns) by new text; an insertion is an edit whose start and end are the same. The edits of
one mutant never overlap, so a mutant differs from the reference only where it changed, and its
comments and layout elsewhere stay as they were.
"""

from __future__ import annotations

import ast
import textwrap

from grader.records import record


@record
class Edit:
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


def replace(node: ast.AST, text: str) -> Edit:
    """``node``'s own text replaced by ``text``."""
    end = (getattr(node, "end_lineno", None) or node.lineno,  # type: ignore[attr-defined]
           node.end_col_offset if node.end_col_offset is not None else node.col_offset)  # type: ignore[attr-defined]
    return Edit((node.lineno, node.col_offset), end, text)  # type: ignore[attr-defined]


def splice(source: str, edits: list[Edit]) -> str:
    """``source`` with every edit applied (positions refer to ``source`` as it was)."""
    data = source.encode()
    starts = _line_starts(data)
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        begin, end = _offset(starts, data, edit.start), _offset(starts, data, edit.end)
        data = data[:begin] + edit.text.encode() + data[end:]
    return data.decode()


def text_of(source: str, edit: Edit) -> str:
    """The text of ``source`` that ``edit`` replaces."""
    data = source.encode()
    starts = _line_starts(data)
    return data[_offset(starts, data, edit.start):_offset(starts, data, edit.end)].decode()


class Lines:
    """A source's lines (as bytes, as ast counts columns), to find and move whole statements."""

    def __init__(self, source: str):
        self.lines = source.encode().splitlines(keepends=True)   # as ast counts lines: \n, \r\n, \r

    def whole(self, statement: ast.stmt) -> bool:
        """Whether ``statement`` has its lines to itself (nothing but a comment after it)."""
        first, last = self.lines[statement.lineno - 1], self.lines[(statement.end_lineno or statement.lineno) - 1]
        after = last[statement.end_col_offset or 0:].strip()
        return not first[:statement.col_offset].strip() and (not after or after.startswith(b"#"))

    def text(self, statement: ast.stmt) -> str:
        """The statement's whole lines, newline included."""
        text = b"".join(self.lines[statement.lineno - 1:statement.end_lineno]).decode()
        return text if text.endswith("\n") else text + "\n"

    def removal(self, statement: ast.stmt) -> Edit:
        """An edit removing the statement's whole lines."""
        return Edit((statement.lineno, 0), ((statement.end_lineno or statement.lineno) + 1, 0), "")

    def before(self, statement: ast.stmt, text: str) -> Edit:
        """An insertion of ``text`` (whole lines) above ``statement``."""
        return Edit((statement.lineno, 0), (statement.lineno, 0), text)

    def after(self, statement: ast.stmt, text: str) -> Edit:
        """An insertion of ``text`` (whole lines) below ``statement``."""
        line = (statement.end_lineno or statement.lineno) + 1
        return Edit((line, 0), (line, 0), text)

    def with_statements(self, statement: ast.stmt, code: str) -> Edit:
        """The statement's whole lines replaced by ``code`` (statements, dedented), at its indentation."""
        indent = " " * statement.col_offset
        new = textwrap.indent(textwrap.dedent(code).strip("\n") + "\n", indent)
        return Edit((statement.lineno, 0), ((statement.end_lineno or statement.lineno) + 1, 0), new)


def _line_starts(data: bytes) -> list[int]:
    starts, at = [0], 0
    for line in data.splitlines(keepends=True):
        at += len(line)
        starts.append(at)
    return starts


def _offset(starts: list[int], data: bytes, position: tuple[int, int]) -> int:
    line, column = position
    if line - 1 >= len(starts) - 1:  # past the last line: the end of the text
        return len(data)
    return starts[line - 1] + column
