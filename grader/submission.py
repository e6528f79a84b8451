"""A submission: the file a student handed in, read and checked in the grader before any of it runs.

:func:`read_submission` reads the file once, turns it into the module the sandbox imports through
its format (:mod:`grader.formats`), and gives a friendly message for the common ways a file cannot
be graded: missing, too large, not text, a syntax error (file, line and caret), or an import of a
module the assignment forbids. The sandbox blocks forbidden imports again at run time; this scan
catches the plain and the indirect-but-literal ones (``importlib``, ``__import__``, ``exec`` of a
string) with a line number. The :class:`Submission` it returns is what the sandbox gets: the very
bytes checked and the code compiled from them, never a later edit of the file.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import CodeType

import grader.python_ast as python_ast
from grader.formats import FormatProblem, ModuleSource, ReadContext, format_of, suffixes
from grader.formats.source import syntax_error_excerpt
from grader.records import record

MAX_SUBMISSION_BYTES = 1_000_000  # of the module's source, in every format


@record
class Submission:
    """A submission file as read and checked: what the sandbox imports, or why it cannot run."""

    path: Path                       # the file as given
    data: bytes | None               # its bytes as read (None when it could not be read)
    module_name: str                 # the name the sandbox imports it under
    module_file: str                 # the file name its tracebacks show
    module_text: str | None = None   # the Python source the sandbox imports
    code: CodeType | None = None     # compiled from module_text, when it may run
    problem: str | None = None       # one message for the student; None when the file may run
    warnings: tuple[str, ...] = ()   # what its format dropped or changed
    locate: Callable[[int], str] | None = None  # a module line -> where the student finds it

    @property
    def sha256(self) -> str:
        """The content hash recorded in results (empty when the file could not be read). Computed
        when asked, after the sandbox has its job."""
        return "" if self.data is None else _sha256(self.data)

    @property
    def name(self) -> str:
        return self.path.name


def read_submission(path: Path, forbidden: tuple[str, ...] = (), context: ReadContext | None = None) -> Submission:
    """Read ``path`` and check it; never raises for anything about the file itself. ``context``:
    what its format may need of the assignment (its id, a trusted cache); ``forbidden`` is its."""
    context = ReadContext(forbidden=forbidden) if context is None else replace(context, forbidden=forbidden)
    path = Path(path)
    name = path.name
    unreadable = Submission(path, None, path.stem, name)
    kind = format_of(path)
    if kind is None:
        return _with(unreadable, f"{name} is not a submission this grader reads (it reads "
                                 f"{', '.join(suffixes())} files); hand in your work as one of those")
    try:
        size = path.stat().st_size
        if size > kind.max_file_bytes:
            return _with(unreadable, f"{name} is {size:,} bytes; a submission may be at most {kind.max_file_bytes:,}")
        data = path.read_bytes()
    except FileNotFoundError:
        return _with(unreadable, f"{name} was not found ({path})")
    except OSError as error:
        return _with(unreadable, f"{name} could not be read: {error.strerror}")
    read = Submission(path, data, path.stem, name)
    if not data.strip():
        return _with(read, f"empty file: {name} holds {'nothing (0 bytes)' if not data else 'only whitespace'}; "
                           "hand in the file you worked in")
    try:
        module = kind.read(path, data, context)
    except FormatProblem as problem:
        return _with(read, str(problem))
    return _checked(read, module, forbidden, context.forbidden_reason)


def _with(submission: Submission, problem: str) -> Submission:
    return replace(submission, problem=problem)


def _checked(read: Submission, module: ModuleSource, forbidden: tuple[str, ...], reason: str) -> Submission:
    submission = replace(read, module_file=module.filename, module_text=module.text, warnings=module.warnings,
                         locate=module.locate)
    encoded = len(module.text.encode("utf-8", "surrogatepass"))
    if encoded > MAX_SUBMISSION_BYTES:
        return _with(submission, f"{read.name} holds {encoded:,} bytes of code; a submission may hold at most "
                                 f"{MAX_SUBMISSION_BYTES:,}")
    # A format with a line map (a notebook) is named as the student knows it: autodiff.ipynb, cell 7, line 3.
    name = read.name if module.locate is not None else module.filename
    try:
        # Compiled, not just parsed: the errors Python would raise at import (a module-level
        # `return` too), and bytecode to glance at before walking any syntax tree.
        # As the sandbox would (no -O), under the name its tracebacks show.
        code = compile(module.text, module.filename, "exec", dont_inherit=True, optimize=0)
    except SyntaxError as error:
        return _with(submission, format_syntax_error(error, name, module.text, module.locate))
    except (ValueError, RecursionError, MemoryError) as error:
        return _with(submission, f"{name} cannot be parsed: {error}")
    found = []
    if _mentions(code, forbidden):
        found = forbidden_imports(python_ast.parse(module.text, filename=module.filename), forbidden)
    if found:
        line, imported = found[0]
        return _with(submission, f"{_where(name, line, module.locate)}: imports {imported!r}, which this assignment "
                                 f"does not allow (forbidden: {', '.join(forbidden)}){forbidden_because(reason)}")
    return replace(submission, code=code)


def forbidden_because(reason: str) -> str:
    """The assignment's ``forbidden_reason``, as a clause after a refused import ("" when it gives none)."""
    return f"; {reason}" if reason else ""


def _where(name: str, line: int | None, locate: Callable[[int], str] | None) -> str:
    if locate is not None and line is not None:
        return f"{name}, {locate(line)}"
    return f"{name}, line {line}"


def sha256_of(path: Path) -> str:
    """The content hash a result records for the file at ``path`` (empty when it cannot be read)."""
    try:
        return _sha256(path.read_bytes())
    except OSError:
        return ""


def _sha256(data: bytes) -> str:
    from grader.digests import sha256
    return sha256(data).hexdigest()


def format_syntax_error(error: SyntaxError, name: str, source: str,
                        locate: Callable[[int], str] | None = None) -> str:
    """``file, line N: message`` then the line of ``source`` (what was compiled) and a caret under the column."""
    return f"{_where(name, error.lineno, locate)}: {error.msg}" + syntax_error_excerpt(error, source)


def _mentions(code: CodeType, forbidden: tuple[str, ...]) -> bool:
    """Whether a forbidden name appears among the compiled module's names or inside its string
    constants. A cheap first look that misses nothing :func:`forbidden_imports` would find: an
    import puts the module's name among the names, and the compiler has already decoded escapes
    and joined adjacent literals in the constants. Only a hit costs a walk of the syntax tree."""
    codes = [code]
    while codes:
        current = codes.pop()
        if any(_banned(name, forbidden) for name in current.co_names):
            return True
        for constant in current.co_consts:
            if isinstance(constant, CodeType):
                codes.append(constant)
            elif isinstance(constant, str) and (_banned(constant.strip(), forbidden) or "import" in constant and any(
                    module in constant for module in forbidden)):  # the two kinds of string the walk flags
                return True
    return False


def _banned(module: str | None, forbidden: tuple[str, ...]) -> bool:
    """``module`` is forbidden, or inside a forbidden package."""
    return module is not None and bool(module) and (module in forbidden or module.partition(".")[0] in forbidden)


def forbidden_imports(tree: ast.AST, forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, module) for each import of a forbidden module, or string naming one passed to a call."""

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _banned(alias.name, forbidden)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and _banned(node.module, forbidden):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.Call):
            # importlib.import_module("torch"), __import__("jax"), exec("import torch")...
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    text = arg.value.strip()
                    if _banned(text, forbidden):
                        found.append((node.lineno, text))
                    elif "import" in text:
                        found += [(node.lineno, module) for _, module in _imports_in_code(text, forbidden)]
    return sorted(found)


def _imports_in_code(text: str, forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    """The forbidden imports in a string of code handed to exec() or compile()."""
    try:
        return forbidden_imports(python_ast.parse(text), forbidden)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
