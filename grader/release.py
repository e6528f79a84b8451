"""``grader release``: build the student handout zip, and prove it leaks nothing.

The handout is the exercise folder (the submission file as students start from it, the README, the
public scenarios and their spec, and anything else in the folder), as a zip under ``<assignment id>/``.
Before writing it, :func:`find_leaks` (pure) looks through every file for

- a hidden scenario's id (as a word) or title, or the code of its program or check;
- a file of the solutions folder (the same bytes, or for Python the same syntax tree);
- the body of a task function of the reference;

code compared in the normal form of :mod:`grader.audit.functions` (renaming locals, reformatting or
removing comments does not hide a copy; code that the reference also has in its provided part is not
a leak). And the audit's basic guarantees must hold: the reference earns every point on every seed,
the handout none. Otherwise nothing is written and :class:`ReleaseRefused` lists every problem.
"""

from __future__ import annotations

import ast
import io
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from grader.audit.analysis import FindingKind
from grader.audit.functions import (
    bound_names,
    functions,
    normal_module,
    normal_statements,
    statement_lists,
    without_docstring,
)
from grader.errors import GraderError

# The audit's findings that make a release refuse: the reference is not full, the handout earns points.
BASIC_GUARANTEES = (FindingKind.REFERENCE_FAILS, FindingKind.FLAKY, FindingKind.FREE_POINTS)
SKIPPED = re.compile(r"(^|/)(__pycache__|\.[^/]*)(/|$)|\.py[co]$")   # caches and dotfiles are never released
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)   # fixed: the same folder gives the same zip, byte for byte


class ReleaseRefused(GraderError):
    """The handout was not built; ``problems`` says why, one line each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


@dataclass(frozen=True)
class Leak:
    file: str
    line: int | None
    what: str

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: leaks {self.what}"


@dataclass(frozen=True)
class Secret:
    """Code that must not be released: its statements' normal forms, and what to call it.
    ``whole``: it leaks only as a function's whole body, not as a part of one."""

    label: str
    forms: tuple[str, ...]
    whole: bool = False


# A hidden scenario's code is often a public one's with other inputs, sharing a line or two of its
# check: only a whole body, or a run of this many statements, is a copy of it.
HIDDEN_RUN = 3


@dataclass(frozen=True)
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
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_scenario_code(node, ids):
                body = functions_body(node)
                if body:
                    what = "program" if node.name in ids else "check"
                    code.append(Secret(f"the {what} of a hidden scenario ({name}:{node.lineno})",
                                       normal_statements(body, bound_names(node)), len(body) < HIDDEN_RUN))
    name, text = reference
    located = functions(ast.parse(text))
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
            tree = ast.parse(text)
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
        return normal_module(ast.parse(content.decode("utf-8")))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return None


def _unique(leaks: list[Leak]) -> list[Leak]:
    seen, unique = set(), []
    for leak in leaks:
        if leak not in seen:
            seen.add(leak)
            unique.append(leak)
    return unique


def zip_bytes(prefix: str, files: list[tuple[str, bytes]]) -> bytes:
    """A deterministic zip of ``files`` under ``prefix/`` (sorted, fixed dates and modes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(files):
            info = zipfile.ZipInfo(f"{prefix}/{path}", _ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


# --------------------------------------------------------------------------- shell

@dataclass(frozen=True)
class Released:
    out: Path
    files: tuple[str, ...]
    seeds: int


def release(assignment_dir: Path, out: Path, *, solutions_dir: Path | None = None, seeds: int = 20,
            jobs: int = 1, on_progress=lambda progress: None) -> Released:
    """Check and build the handout zip of the assignment in ``assignment_dir`` (see the module doc)."""
    from grader.audit.run import AuditOptions, load_audited, run_audit, scenario_texts
    from grader.visibility import Visibility

    assignment, solutions = load_audited(assignment_dir, solutions_dir)
    released = list(_folder_files(assignment_dir))
    hidden_specs = [s for s in assignment.scenarios if s.visibility is Visibility.HIDDEN]
    hidden_files = {s.file for s in hidden_specs}
    texts = scenario_texts(assignment)
    hidden_file = next(((path, text) for path, text in texts.items() if path in hidden_files), None)
    reference_path = solutions / assignment.submission
    reference = (str(reference_path), reference_path.read_text(encoding="utf-8"))
    names = [name for task in assignment.tasks for name in task.functions]
    solution_files = [(str(p.relative_to(solutions.parent)), p.read_bytes()) for p in sorted(solutions.rglob("*"))
                      if p.is_file() and not SKIPPED.search(str(p.relative_to(solutions)))]
    secrets = secrets_of([(s.id, s.title) for s in hidden_specs], hidden_file, reference, names, solution_files)
    problems = [str(leak) for leak in find_leaks(released, secrets)]
    report = run_audit(AuditOptions(assignment_dir, solutions_dir=solutions, seeds=seeds, jobs=jobs, mutants=False),
                       on_progress)
    problems += [f"audit: {finding.message}" for finding in report.analysis.findings
                 if finding.kind in BASIC_GUARANTEES]
    if problems:
        raise ReleaseRefused(problems)
    _write_atomically(out, zip_bytes(assignment.id, released))
    return Released(out, tuple(path for path, _ in sorted(released)), seeds)


def _write_atomically(path: Path, content: bytes) -> None:
    """A reader sees the old zip or the new one, never half of one."""
    import os
    import tempfile
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _folder_files(folder: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not SKIPPED.search(relative):
            yield relative, path.read_bytes()
