"""What a student handout must not contain, and where it does: the release's leak check. Pure.

:func:`secrets_of` gathers the secrets (hidden scenarios' ids, titles, programs and checks; the task
bodies of the reference; the solutions folder's files), :func:`find_leaks` looks for each in the files
about to be released. Code is compared in the normal form of :mod:`grader.audit.functions`: renaming
locals, reformatting or removing comments does not hide a copy, and code the reference also has in its
provided part is not a leak.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

import grader.python_ast as python_ast
from grader.audit.functions import (
    bound_names,
    functions,
    normal_module,
    normal_statements,
    statement_lists,
    without_docstring,
)
from grader.records import record


@record
class Leak:
    file: str
    line: int | None
    what: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: leaks {self.what}"


@record
class Secret:
    """Code that must not be released: its statements' normal forms, and what to call it.
    ``whole``: it leaks only as a function's whole body, not as a part of one."""

    label: str
    forms: tuple[str, ...]
    whole: bool = False


# A hidden scenario's code is often a public one's with other inputs, sharing a line or two of its
# check: only a whole body, or a run of this many statements, is a copy of it.
HIDDEN_RUN = 3


@record
class Secrets:
    hidden: tuple[tuple[str, str], ...]     # (id, title) of each hidden scenario
    code: tuple[Secret, ...]                # hidden programs and checks, the reference's task bodies
    allowed: frozenset[tuple[str, ...]]     # statement runs the reference's provided code has too
    files: tuple[tuple[str, bytes], ...]    # (name, content) of every file of the solutions folder


# --------------------------------------------------------------------------- pure core

def secrets_of(hidden: list[tuple[str, str]], hidden_file: tuple[str, str] | None, reference: tuple[str, str],
               task_functions: list[str], solution_files: list[tuple[str, bytes]]) -> Secrets:
    """What a release must not contain. ``hidden_file`` and ``reference`` are (name, text)."""
    code: list[Secret] = []
    ids = {sid for sid, _ in hidden}
    if hidden_file is not None:
        name, text = hidden_file
        for node in ast.walk(python_ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_scenario_code(node, ids):
                body = functions_body(node)
                if body:
                    what = "program" if node.name in ids else "check"
                    code.append(Secret(f"the {what} of a hidden scenario ({name}:{node.lineno})",
                                       normal_statements(body, bound_names(node)), len(body) < HIDDEN_RUN))
    name, text = reference
    located = functions(python_ast.parse(text))
    for qualname in task_functions:
        function = located[qualname]
        if function.body:
            code.append(Secret(f"the body of {qualname} of the reference ({name}:{function.body[0].lineno})",
                               normal_statements(function.body, bound_names(function.node))))
    lengths = {len(secret.forms) for secret in code}
    allowed = {run for qualname, function in located.items() if qualname not in task_functions
               for run, _ in _runs(function.node, lengths)}
    return Secrets(tuple(hidden), tuple(code), frozenset(allowed), tuple(solution_files))


def find_leaks(released: list[tuple[str, bytes]], secrets: Secrets) -> list[Leak]:
    """Every leak in the files about to be released, given as (relative path, content)."""
    leaks: list[Leak] = []
    lengths = {len(secret.forms) for secret in secrets.code}
    by_form = {secret.forms: secret for secret in secrets.code}
    solution_forms = {}
    for name, content in secrets.files:
        if name.endswith(".py"):
            form = _module_form(content)
            if form is not None:
                solution_forms[form] = name
    for path, content in released:
        for name, other in secrets.files:
            if content.strip() and content == other:
                leaks.append(Leak(path, None, f"the file {name} of the solutions folder (the same bytes)"))
        text = content.decode("utf-8", errors="replace")
        leaks += _text_leaks(path, text, secrets.hidden)
        if not path.endswith(".py"):
            continue
        form = _module_form(content)
        if form is not None and form in solution_forms and content not in (c for _, c in secrets.files):
            leaks.append(Leak(path, None, f"the file {solution_forms[form]} of the solutions folder "
                                          "(the same code, reformatted)"))
        try:
            tree = python_ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = normal_statements(functions_body(node), bound_names(node))
                for run, line in _runs(node, lengths):
                    secret = by_form.get(run)
                    if secret is None or run in secrets.allowed or (secret.whole and run != body):
                        continue
                    leaks.append(Leak(path, line, secret.label))
    return _unique(leaks)


def functions_body(node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    return without_docstring(node.body)


def _is_scenario_code(node: ast.FunctionDef | ast.AsyncFunctionDef, ids: set[str]) -> bool:
    """A hidden scenario's program (named by its id) or check (decorated ``@<id>.check``)."""
    if node.name in ids:
        return True
    return any(isinstance(d, ast.Attribute) and d.attr == "check" and isinstance(d.value, ast.Name)
               and d.value.id in ids for d in node.decorator_list)


def _runs(function: ast.AST, lengths: set[int]) -> Iterator[tuple[tuple[str, ...], int]]:
    """Every run of consecutive statements of the wanted lengths in a function, in normal form."""
    bound = bound_names(function)
    for statements in statement_lists(function):
        forms = normal_statements(statements, bound)
        for length in lengths:
            for start in range(len(forms) - length + 1):
                yield forms[start:start + length], statements[start].lineno


def _text_leaks(path: str, text: str, hidden: tuple[tuple[str, str], ...]) -> list[Leak]:
    leaks = []
    folded = " ".join(text.split()).casefold()
    for sid, title in hidden:
        match = re.search(rf"(?<![A-Za-z0-9_]){re.escape(sid)}(?![A-Za-z0-9_])", text)
        if match:
            line = text.count("\n", 0, match.start()) + 1
            leaks.append(Leak(path, line, f"the id of hidden scenario {sid}"))
        if title and " ".join(title.split()).casefold() in folded:
            leaks.append(Leak(path, None, f"the title of hidden scenario {sid} ({title!r})"))
    return leaks


def _module_form(content: bytes) -> str | None:
    try:
        return normal_module(python_ast.parse(content.decode("utf-8")))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _unique(leaks: list[Leak]) -> list[Leak]:
    seen, unique = set(), []
    for leak in leaks:
        if leak not in seen:
            seen.add(leak)
            unique.append(leak)
    return unique
