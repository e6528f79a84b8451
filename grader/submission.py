"""Static checks on a submission, in the grader, before any of it runs.

The source is read and parsed (never executed) to give a friendly message for the common ways a
file cannot be graded: missing, too large, not UTF-8, a syntax error (file, line and caret), or
an import of a module the assignment forbids. The sandbox blocks forbidden imports again at run
time; this scan catches the plain and the indirect-but-literal ones (``importlib``,
``__import__``, ``exec`` of a string) with a line number.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from types import CodeType

MAX_SUBMISSION_BYTES = 1_000_000


@dataclass(frozen=True)
class StaticReport:
    source: bytes | None          # the bytes checked (None when the file could not be read)
    problem: str | None = None    # one message for the student; None when the file may run
    # When the file may run, the module compiled from ``source``: the sandbox runs this code
    # instead of compiling the file again (the same bytes, compiled once).
    code: CodeType | None = None

    @property
    def sha256(self) -> str:
        """The content hash recorded in results (empty when the file could not be read). Computed
        when asked, after the sandbox has its job."""
        return "" if self.source is None else _sha256(self.source)


def inspect_submission(path: Path, forbidden: tuple[str, ...]) -> StaticReport:
    name = path.name
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            return StaticReport(None, f"{name} is {size:,} bytes; a submission may be at most {MAX_SUBMISSION_BYTES:,}")
        data = path.read_bytes()
    except FileNotFoundError:
        return StaticReport(None, f"{name} was not found ({path})")
    except OSError as error:
        return StaticReport(None, f"{name} could not be read: {error.strerror}")
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return StaticReport(data, f"{name} is not UTF-8 text (byte {error.start}); save it as UTF-8")
    try:
        # Compiled, not just parsed: the errors Python would raise at import (a module-level
        # `return` too), and bytecode to glance at before walking any syntax tree.
        code = compile(source, name, "exec", dont_inherit=True, optimize=0)  # as the sandbox would: no -O
    except SyntaxError as error:
        return StaticReport(data, format_syntax_error(error, name))
    except (ValueError, RecursionError, MemoryError) as error:
        return StaticReport(data, f"{name} cannot be parsed: {error}")
    found = []
    if _mentions(code, forbidden):
        found = forbidden_imports(ast.parse(source, filename=name), forbidden)
    if found:
        line, module = found[0]
        return StaticReport(data, f"{name}, line {line}: imports {module!r}, which this assignment does not allow "
                                    f"(forbidden: {', '.join(forbidden)}); the point is to write the gradients yourself")
    return StaticReport(data, code=code)


def sha256_of(path: Path) -> str:
    """The content hash recorded in results (empty when the file cannot be read)."""
    try:
        return _sha256(path.read_bytes())
    except OSError:
        return ""


def _sha256(data: bytes) -> str:
    from grader.digests import sha256
    return sha256(data).hexdigest()


def format_syntax_error(error: SyntaxError, name: str) -> str:
    """``file, line N: message`` then the line and a caret under the column."""
    text = f"{name}, line {error.lineno}: {error.msg}"
    if error.text:
        line = error.text.rstrip("\n")
        stripped = line.lstrip()
        caret = max((error.offset or 1) - 1 - (len(line) - len(stripped)), 0)
        text += f"\n    {stripped}\n    {' ' * caret}^"
    return text


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
    return bool(module) and (module in forbidden or module.partition(".")[0] in forbidden)


def forbidden_imports(tree: ast.AST, forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, module) for each import of a forbidden module, or string naming one passed to a call."""

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _banned(alias.name, forbidden)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _banned(node.module, forbidden):
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
        return forbidden_imports(ast.parse(text), forbidden)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
