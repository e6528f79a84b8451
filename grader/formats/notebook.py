"""A Jupyter notebook submission: read it, and build the module the sandbox imports from its code.

No kernel ever runs: the notebook is read as JSON, validated by nbformat (the optional extra
``notebook``, whose packages the error names when they are missing; a ``.py`` submission never
imports it), and its
code cells become one Python module, cell after cell, each line where it is in its cell
(nbformat's schema is checked without importing nbformat: see :mod:`grader.formats.notebook_schema`):

1. IPython-only syntax is taken out of each code cell (:mod:`grader.formats.ipython_syntax`);
2. each cell is parsed on its own (a syntax error names its cell and line);
3. top-level statements that only demonstrate are left out, unless the assignment asks for every
   cell (:mod:`grader.formats.cell_statements`).

A cell tagged ``not-graded`` (:data:`NOT_GRADED_TAG`; the handout's "Try it yourself" and check
cells) is left out whole, without a warning: its author chose so, and Jupyter shows the tag.

Every line left out is a :class:`~grader.formats.dropped.Dropped` in the result, never
silent. Limits: the file may be up to :data:`MAX_NOTEBOOK_BYTES` (outputs, images included), its
code cells together up to :data:`MAX_CODE_BYTES` (the limit of a ``.py`` submission). The
handout notebook names its assignment in its metadata (:data:`METADATA_KEY`), so a notebook of
another assignment is refused with a clear message.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import grader.python_ast as python_ast
from grader.formats.cell_statements import CellPolicy, Names, select_statements
from grader.formats.dropped import Dropped
from grader.formats.ipython_syntax import strip_ipython
from grader.formats.line_map import CellLine, LineMap, Segment
from grader.formats.source import FormatProblem, ModuleSource, ReadContext, syntax_error_excerpt

if TYPE_CHECKING:
    from grader.spec_cache import SpecCache

MAX_NOTEBOOK_BYTES = 50_000_000
MAX_CODE_BYTES = 1_000_000
METADATA_KEY = "autodiff_grader"     # notebook metadata: {"autodiff_grader": {"assignment": "<id>"}}
NOT_GRADED_TAG = "not-graded"        # a cell tagged so is left out, without a warning: its author chose it
READ_MAJOR = 4                       # the nbformat major version read (Jupyter has saved 4 since 2015)


class NotebookError(ValueError):
    """The file cannot be graded as a notebook; the message says why and what to do."""


class Located(NamedTuple):
    """A dropped stretch of a cell: its place in the notebook and what was dropped."""

    where: CellLine
    end_line: int
    dropped: Dropped

    def describe(self, notebook: str) -> str:
        lines = f"line {self.where.line}" if self.end_line == self.where.line else \
            f"lines {self.where.line}-{self.end_line}"
        text = self.dropped.text if len(self.dropped.text) <= 60 else self.dropped.text[:57] + "..."
        return f"{notebook}, cell {self.where.cell}, {lines}: not graded: {text} ({self.dropped.reason.value})"


class NotebookModule(NamedTuple):
    """The module built from a notebook: its text, where each of its lines came from, and what
    was left out."""

    text: str
    line_map: LineMap
    dropped: tuple[Located, ...]

    def where(self, module_line: int, notebook: str) -> str | None:
        place = self.line_map.locate(module_line)
        return None if place is None else place.describe(notebook)

    def cell_line(self, module_line: int) -> str:
        """``cell 7, line 3`` for a line of the module (the notebook's name goes before it)."""
        place = self.line_map.locate(module_line)
        return f"line {module_line} of its code" if place is None else f"cell {place.cell}, line {place.line}"

    def warnings(self, notebook: str) -> tuple[str, ...]:
        return tuple(item.describe(notebook) for item in self.dropped)


def read_notebook(data: bytes, name: str, *, assignment: str | None, policy: CellPolicy = CellPolicy.DEFINITIONS,
                  forbidden: tuple[str, ...] = (), cache: SpecCache | None = None) -> NotebookModule:
    """Build the module of the notebook ``data`` (the bytes of the file ``name``).

    ``assignment``: the id the notebook's metadata must name, when it names one. Raises
    :class:`NotebookError` for a file that cannot be graded (not JSON, not a notebook, a version
    not read, invalid, another assignment's, too much code, a syntax error), and
    :class:`~grader.errors.UsageError` when nbformat is not installed."""
    notebook = parse_notebook(data, name)
    check_assignment(notebook, name, assignment)
    validate_notebook(notebook, name, cache)
    return build_module(notebook, name, policy, forbidden)


def parse_notebook(data: bytes, name: str) -> dict:
    """The notebook's JSON, with the checks that come before nbformat's: size, UTF-8, JSON, a
    notebook, a version read."""
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise NotebookError(f"{name} is {len(data):,} bytes; a notebook may be at most {MAX_NOTEBOOK_BYTES:,} "
                            f"(outputs included): clear the outputs (Edit > Clear All Outputs) and save it")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"{name} is not UTF-8 text (byte {error.start}), so not a Jupyter notebook") from None
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"{name} is not a Jupyter notebook: it is not JSON (line {error.lineno}, column "
                            f"{error.colno}: {error.msg}). Submit the .ipynb file Jupyter saved; a Python "
                            f"file renamed to .ipynb is not one") from None
    except RecursionError:
        raise NotebookError(f"{name} is not a Jupyter notebook: its JSON nests too deeply") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("nbformat"), int):
        raise NotebookError(f"{name} is JSON but not a Jupyter notebook (it has no nbformat version): "
                            f"submit the .ipynb file Jupyter saved")
    major = notebook["nbformat"]
    if major != READ_MAJOR:
        advice = ("open it in Jupyter and save it again, which converts it to version 4" if major < READ_MAJOR
                  else "please tell your instructors")
        raise NotebookError(f"{name} is a version {major} notebook; the grader reads version {READ_MAJOR} "
                            f"notebooks: {advice}")
    if not isinstance(notebook.get("cells"), list):
        raise NotebookError(f"{name} is not a valid notebook: it has no list of cells")
    return notebook


def check_assignment(notebook: dict, name: str, assignment: str | None) -> None:
    """Refuse the notebook of another assignment (as the metadata of its handout says)."""
    metadata = notebook.get("metadata")
    ours = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    named = ours.get("assignment") if isinstance(ours, dict) else None
    if assignment is not None and isinstance(named, str) and named != assignment:
        raise NotebookError(f"{name} is the notebook of the assignment {named!r}, not of {assignment!r} "
                            f"(its metadata says so): submit your {assignment} notebook")


def validate_notebook(notebook: dict, name: str, cache: SpecCache | None = None) -> None:
    """Validate against nbformat's schema for the notebook's version
    (:mod:`grader.formats.notebook_schema`; ``cache``: one the grader trusts, else None)."""
    from grader.formats.notebook_schema import schema_problem
    problem = schema_problem(notebook, cache)
    if problem is not None:
        problem = cells_counted_from_one(problem)
        problem = problem if len(problem) <= 240 else problem[:237] + "..."
        raise NotebookError(f"{name} is not a valid Jupyter notebook (nbformat 4): {problem}. "
                            f"Open it in Jupyter and save it again")


_CELL_PATH = re.compile(r"\b(?:notebook|data)\.cells\[(\d+)\](?:\.(\w+))?")


def cells_counted_from_one(problem: str) -> str:
    """A schema problem's ``notebook.cells[10].execution_count`` (a 0-based index) as every other
    message says it: ``cell 11's execution_count`` (cells counted from 1, markdown cells included)."""
    def named(match: re.Match[str]) -> str:
        cell = f"cell {int(match[1]) + 1}"
        return f"{cell}'s {match[2]}" if match[2] else cell
    return _CELL_PATH.sub(named, problem)


def build_module(notebook: dict, name: str, policy: CellPolicy, forbidden: tuple[str, ...]) -> NotebookModule:
    """The module of a parsed notebook's code cells, with its line map and what it left out."""
    pieces: list[str] = []
    segments: list[Segment] = []
    dropped: list[Located] = []
    names = Names()
    line, code_bytes = 1, 0
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code" or _not_graded(cell):
            continue
        source = _source(cell, name, number)
        code_bytes += len(source.encode("utf-8"))
        if code_bytes > MAX_CODE_BYTES:
            raise NotebookError(f"the code cells of {name} hold more than {MAX_CODE_BYTES:,} bytes of code "
                                f"(outputs do not count); a submission may hold at most that")
        cell_id = cell.get("id") if isinstance(cell.get("id"), str) else None
        text = strip_ipython(source)
        lines = text.lines
        removed = list(text.dropped)
        if lines is not None:
            tree = _parse(lines, name, number, cell_id)
            statements = select_statements(tree, lines, policy, forbidden, names)
            removed += statements
            lines = _blank(lines, statements)
        dropped += [Located(CellLine(number, cell_id, d.line), d.end_line, d)
                    for d in sorted(removed, key=lambda d: d.line)]
        if lines is None or not any(text_line.strip() for text_line in lines):
            continue
        segments.append(Segment(line, len(lines), number, cell_id))
        pieces += lines
        line += len(lines)
    if not pieces:
        code_cells = sum(1 for cell in notebook["cells"] if isinstance(cell, dict) and cell.get("cell_type") == "code")
        raise NotebookError(f"{name} has no code to grade ({code_cells} code cell{'s' * (code_cells != 1)}, "
                            f"none with graded code): is it the notebook you worked in?")
    return NotebookModule("".join(pieces), LineMap(tuple(segments)), tuple(dropped))


def _not_graded(cell: dict) -> bool:
    """A cell its author tagged to be left out (the handout's "Try it yourself" and check cells)."""
    metadata = cell.get("metadata")
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return isinstance(tags, list) and NOT_GRADED_TAG in tags


def _source(cell: dict, name: str, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError(f"{name} is not a valid notebook: cell {number}'s source is not text")


def _parse(lines: tuple[str, ...], name: str, number: int, cell_id: str | None) -> ast.Module:
    """One cell's syntax tree; a syntax error names the cell and the line in it."""
    source = "".join(lines)
    try:
        return python_ast.parse(source, filename=name)
    except SyntaxError as error:
        where = CellLine(number, cell_id, error.lineno or 1)
        raise NotebookError(format_cell_syntax_error(error, where, name, source)) from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise NotebookError(f"{name}, cell {number} cannot be parsed: {error}") from None


def format_cell_syntax_error(error: SyntaxError, where: CellLine, name: str, source: str) -> str:
    """``autodiff.ipynb, cell 7, line 3: message``, then the cell's line (of ``source``, the cell's
    code) and a caret, as for a ``.py``."""
    return f"{where.describe(name)}: {error.msg}" + syntax_error_excerpt(error, source)


def _blank(lines: tuple[str, ...], dropped: list[Dropped]) -> tuple[str, ...]:
    """The lines with each dropped top-level statement's lines made blank (numbers unchanged)."""
    out = list(lines)
    for item in dropped:
        for index in range(item.line - 1, item.end_line):
            out[index] = "\n"
    return tuple(out)


class NotebookFormat:
    """The ``.ipynb`` entry of the table of formats (:mod:`grader.formats`). The module is imported
    as ``<stem>.py`` (the sandbox imports Python files); its lines map back to cells."""

    name = "Jupyter notebook"
    max_file_bytes = MAX_NOTEBOOK_BYTES

    def read(self, path: Path, data: bytes, context: ReadContext) -> ModuleSource:
        try:
            policy = CellPolicy(context.notebook_cells)
        except ValueError:
            raise FormatProblem(f"notebook_cells is {context.notebook_cells!r}: one of "
                                f"{', '.join(p.value for p in CellPolicy)}") from None
        try:
            module = read_notebook(data, path.name, assignment=context.assignment, policy=policy,
                                   forbidden=context.forbidden, cache=context.cache)
        except NotebookError as problem:
            raise FormatProblem(str(problem)) from None
        return ModuleSource(module.text, f"{path.stem}.py", module.warnings(path.name), locate=module.cell_line)


NOTEBOOK = NotebookFormat()
