"""The assignment spec: what ``assignment.yaml`` (and the instructor's ``hidden.yaml``) declare, checked
against the scenario files' index. Pure: documents and texts in, a frozen :class:`Plan` out.

Students receive ``exercises/<id>/assignment.yaml`` with the public scenarios; instructors keep
``solutions/<id>/hidden.yaml`` with the hidden ones. Reading the files (and caching what was parsed)
is :mod:`grader.loading`'s job; this module validates what was read and reports every problem as a
:class:`~grader.errors.SpecError` naming the file, the line and the field. A plan holds everything a
sandbox needs (each program's source, limits, forbidden imports) and nothing of the scenario code;
:class:`Assignment` adds the code, imported from the very texts the plan was built from.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import textwrap
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

import grader.python_ast as python_ast
from grader.errors import SpecError
from grader.records import record
from grader.scenario_index import module_parameter
from grader.spec_yaml import Field, Fields, MarkedDict, MarkedList, did_you_mean
from grader.visibility import Scope, Visibility

if TYPE_CHECKING:
    from grader.provided import HandoutPart
    from grader.scenario import Scenario

SPEC_FILE = "assignment.yaml"
HIDDEN_SPEC_FILE = "hidden.yaml"
# Names a program may use besides its parameters and builtins: the sandbox provides them.
SANDBOX_GLOBALS = frozenset({"np", "attempt", "plain"})

NUMBER = (int, float)
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")
_MODULE = re.compile(r"^[A-Za-z_][\w.]*$")
_QUALIFIED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)?$")


def _positive(value) -> str | None:
    return None if value > 0 else "must be more than 0"


def _at_least(low):
    return lambda value: None if value >= low else f"must be at least {low}"


def _one_line(value: str) -> str | None:
    return None if value.strip() and "\n" not in value else "must be one line of text"


def _identifier(value: str) -> str | None:
    import keyword
    if value.isidentifier() and not keyword.iskeyword(value):
        return None
    return "must be a Python name (letters, digits and _)"


PUBLIC_FIELDS = {
    "id": Field((str,), True, describe="a short identifier (letters, digits, _ or -)"),
    "title": Field((str,), True, describe="text"),
    "submission": Field((str,), True, describe="the file name students submit, ending in .py"),
    "scenario_file": Field((str,), True, describe="the Python file beside this one that defines the scenarios"),
    "total_points": Field(NUMBER, describe="a number: the points of public and hidden scenarios together",
                          check=_at_least(0)),
    "time_limit": Field(NUMBER, default=5.0, describe="seconds of wall-clock time per scenario", check=_positive),
    "import_time_limit": Field(NUMBER, default=10.0, describe="seconds to import the submission", check=_positive),
    "memory_limit_mb": Field((int,), default=1024, describe="MiB of address space per process", check=_at_least(64)),
    "output_limit_kb": Field((int,), default=64, describe="KiB of stdout/stderr kept per scenario", check=_at_least(1)),
    "forbidden_imports": Field((list,), default=(), describe="a list of module names"),
    # The exercise's own words, for the grader's messages (a generic grader names no exercise's API).
    "module_alias": Field((str,), describe="the name every scenario program takes the student's module by (its "
                          "first parameter), shown beside a program", check=_identifier),
    "forbidden_reason": Field((str,), default="", describe="one line: why the forbidden imports are forbidden, "
                              "said after the import a submission tried", check=_one_line),
    "handout_command": Field((str,), describe="one line: the command that makes the handout file and its "
                             "provided.json, named when provided.json no longer fits the tasks", check=_one_line),
    "notebook_cells": Field((str,), default="definitions",
                            describe="definitions or all: which top-level code of a notebook submission is graded",
                            check=lambda v: None if v in ("definitions", "all") else "must be definitions or all"),
    "tasks": Field((list,), True, describe="a list of tasks, each with id and title"),
    "scenarios": Field((list,), True, describe="a list of scenarios"),
}
HIDDEN_FIELDS = {
    "assignment": Field((str,), True, describe="the id of the assignment these scenarios extend"),
    "scenario_file": Field((str,), True, describe="the Python file beside this one that defines the scenarios"),
    "scenarios": Field((list,), True, describe="a list of scenarios"),
}
TASK_FIELDS = {
    "id": Field((str,), True, describe="an identifier"),
    "title": Field((str,), True, describe="text"),
    "functions": Field((list,), default=(), describe="a list of the student's functions (name or Class.method)"),
}
SCENARIO_FIELDS = {
    "id": Field((str,), True, describe="the name of the scenario's program function"),
    "title": Field((str,), True, describe="one line saying what the scenario checks"),
    "task": Field((str,), True, describe="the id of a task"),
    "points": Field(NUMBER, True, describe="a number of points (0 for a check of the provided code)",
                    check=_at_least(0)),
    "visibility": Field((str,), describe="public or hidden"),
    "time_limit": Field(NUMBER, describe="seconds (overrides the assignment's time_limit)", check=_positive),
}


@record
class Limits:
    """The assignment's limits: a scenario's time (where it sets none), the import's, memory, output."""

    time: float = PUBLIC_FIELDS["time_limit"].default
    import_time: float = PUBLIC_FIELDS["import_time_limit"].default
    memory_mb: int = PUBLIC_FIELDS["memory_limit_mb"].default
    output_bytes: int = PUBLIC_FIELDS["output_limit_kb"].default * 1024


@record
class Task:
    """A task of the assignment, and the student's functions it is about."""

    id: str
    title: str
    functions: tuple[str, ...] = ()  # qualified names of the student's functions ("Tensor.detach")


@record
class ScenarioPlan:
    """A scenario as the spec declares it, with its program's source: what a sandbox needs."""

    id: str
    title: str
    task: str
    points: float
    visibility: Visibility
    time_limit: float
    source: str         # the program function's source, decorators removed, dedented: what the sandbox runs
    has_inputs: bool    # declared with @scenario(inputs=...): inputs come from the loaded code
    file: str           # the scenario file (path as read) and the program's def line, for messages
    line: int


@record
class ScenarioSpec(ScenarioPlan):
    """A scenario as graded: its plan plus its code (the program, the check, the inputs)."""

    code: Scenario = field(kw_only=True, repr=False, compare=False)


@record
class AssignmentFile:
    """One file of an assignment, as read (its bytes are what the digest is of)."""

    role: str   # "spec", "scenarios", "hidden_spec", "hidden_scenarios"
    name: str   # the file's name in its folder
    data: bytes


@record
class Plan:
    """An assignment as declared: validated spec and programs, no scenario code imported."""

    id: str
    title: str
    submission: str
    directory: Path
    tasks: tuple[Task, ...]
    scenarios: tuple[ScenarioPlan, ...]
    limits: Limits
    forbidden_imports: tuple[str, ...]
    total_points: float | None
    digest: str  # sha256 over every spec and scenario file: a regrade reproduces only when equal
    files: tuple[AssignmentFile, ...] = field(repr=False, default=())  # what a remote worker needs
    hidden_directory: Path | None = None
    notebook_cells: str = "definitions"  # "all": a notebook's every cell runs, as Jupyter's Run All
    forbidden_reason: str = ""  # why its forbidden imports are, in the exercise's words ("" says nothing)
    # The handout's provided parts (name, digest of its syntax tree, SHA-256 of a function's lines),
    # from provided.json: what a submission's engine is compared with (grader.provided). Empty when
    # the assignment ships no fingerprint.
    provided: tuple[HandoutPart, ...] = field(repr=False, default=())

    @property
    def student_functions(self) -> tuple[str, ...]:
        """Every task's functions: the parts of the submission that are the student's work."""
        return tuple(name for task in self.tasks for name in task.functions)

    def select(self, scope: Scope | str) -> tuple[ScenarioPlan, ...]:
        """The scenarios a run of ``scope`` grades, in the spec's order."""
        scope = Scope(scope)
        return tuple(s for s in self.scenarios if scope.includes(s.visibility))


@record
class Assignment(Plan):
    """A plan with its scenario code imported: checks and input makers ready to judge with."""

    scenarios: tuple[ScenarioSpec, ...]  # the plan's, each with its code

    def select(self, scope: Scope | str) -> tuple[ScenarioSpec, ...]:
        scope = Scope(scope)
        return tuple(s for s in self.scenarios if scope.includes(s.visibility))

    def inputs(self, scenario_id: str, seed: int) -> dict:
        """The inputs of one scenario under ``seed`` (empty for a scenario without ``inputs=``). Made
        once per seed: a batch gives every submission the same ones (each run gets its own copy)."""
        key = (scenario_id, seed)
        if key not in self._inputs:
            if len(self._inputs) > 4096:
                self._inputs.clear()
            self._inputs[key] = self._by_id[scenario_id].code.inputs(seed)
        return self._inputs[key]

    @functools.cached_property
    def _by_id(self) -> Mapping[str, ScenarioSpec]:
        return {s.id: s for s in self.scenarios}

    @functools.cached_property
    def _inputs(self) -> dict[tuple[str, int], dict]:
        return {}


# --------------------------------------------------------------------------- validation


@record
class SpecText:
    """One spec file as read: where it is, its parsed document, and its scenario file's text and index."""

    path: str
    document: MarkedDict
    scenario_path: str | None = None     # None: the spec names no (existing) scenario file
    scenario_text: str = ""
    scenario_index: tuple[dict, ...] = ()


def plan_of(public: SpecText, hidden: SpecText | None, *, directory: Path, hidden_directory: Path | None,
            digest: str, files: tuple[AssignmentFile, ...] = (), handout: str | None = None,
            provided: tuple[str, tuple[tuple[str, ...], tuple[HandoutPart, ...]] | str] | None = None) -> Plan:
    """Validate the public spec (and the hidden one) against their scenario files' indexes; raise
    every problem at once. ``handout`` (the provided submission file's text), when given, is where
    each task's ``functions`` must exist. ``provided``: the fingerprint file's path and what it holds
    (the student functions it was made for and each provided part's digest), or why it is unreadable."""
    checker = Fields(public.path)
    top = checker.read(public.document, PUBLIC_FIELDS)
    tasks = _tasks(checker, public.document, top["tasks"], handout)
    limits = Limits(float(top["time_limit"]), float(top["import_time_limit"]), int(top["memory_limit_mb"]),
                    int(top["output_limit_kb"]) * 1024)
    forbidden = _forbidden(checker, top["forbidden_imports"])
    _check_names(checker, public.document, top)
    if top["scenario_file"] is not None and public.scenario_path is None:
        checker.problem(public.document.lines["scenario_file"], "scenario_file",
                        f"{Path(public.path).parent / top['scenario_file']} does not exist")
    if public.scenario_path is None or top["scenarios"] is None:
        checker.raise_if_any()
    alias = top["module_alias"]
    scenarios = _scenarios(checker, public, top["scenarios"], tasks, Visibility.PUBLIC, limits, alias)
    if hidden is not None:
        scenarios += _hidden_scenarios(hidden, top["id"], tasks, limits, {s.id for s in scenarios}, alias)
    total = top["total_points"]
    if hidden is not None and total is not None and abs(sum(s.points for s in scenarios) - total) > 1e-9:
        raise SpecError(public.path, public.document.lines.get("total_points"), "total_points",
                        f"is {total} but the public and hidden scenarios add up to {sum(s.points for s in scenarios)}")
    parts = _provided(provided, tasks, top["handout_command"])
    return Plan(id=top["id"], title=top["title"], submission=top["submission"], directory=directory,
                tasks=tuple(tasks), scenarios=scenarios, limits=limits, forbidden_imports=forbidden,
                total_points=total, digest=digest, files=files, hidden_directory=hidden_directory, provided=parts,
                notebook_cells=top["notebook_cells"], forbidden_reason=top["forbidden_reason"])


def _provided(provided, tasks: list[Task], handout_command: str | None) -> tuple[HandoutPart, ...]:
    """The fingerprint's parts, once it is known to be for these tasks' functions."""
    if provided is None:
        return ()
    path, content = provided
    how = handout_command or "grader.provided.fingerprint(handout, the tasks' functions)"
    regenerate = f"regenerate it from the handout ({how})"
    if isinstance(content, str):
        raise SpecError(path, None, None, f"cannot be read: {content}; {regenerate}")
    student, parts = content
    named = sorted(name for task in tasks for name in task.functions)
    if sorted(student) != named:
        raise SpecError(path, None, None, f"was made for the student functions {', '.join(sorted(student)) or 'none'}, "
                        f"but the tasks name {', '.join(named) or 'none'}; {regenerate}")
    return parts


def _check_names(checker: Fields, document: MarkedDict, top: dict) -> None:
    if top["id"] is not None and not _ID.match(top["id"]):
        checker.problem(document.lines["id"], "id", "must be letters, digits, _ or - (it names files)")
    submission = top["submission"]
    if submission is not None and (not submission.endswith(".py") or "/" in submission or submission.startswith(".")):
        checker.problem(document.lines["submission"], "submission", "must be a plain file name ending in .py")


def _tasks(checker: Fields, document: MarkedDict, raw, handout: str | None) -> list[Task]:
    provided = defined_names(handout) if handout is not None else None
    tasks = []
    for index, item in enumerate(raw or []):
        line = raw.lines[index] if isinstance(raw, MarkedList) else None
        values = checker.read(item, TASK_FIELDS, f"tasks[{index}]", line)
        names = []
        for at, name in enumerate(values["functions"] or ()):
            where = f"tasks[{index}].functions[{at}]"
            at_line = values["functions"].lines[at] if isinstance(values["functions"], MarkedList) else line
            if not isinstance(name, str) or not _QUALIFIED.match(name):
                checker.problem(at_line, where, f"must be a function or Class.method name, got {name!r}")
            elif provided is not None and name not in provided:
                checker.problem(at_line, where, f"{name!r} is not defined in the handout{did_you_mean(name, provided)}")
            else:
                names.append(name)
        if values["id"] is not None:
            tasks.append(Task(values["id"], values["title"] or values["id"], tuple(names)))
    return tasks


def defined_names(source: str) -> list[str]:
    """The functions and methods a module defines at its top level, as ``name`` and ``Class.name``."""
    names = []
    for node in python_ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef):
            names += [f"{node.name}.{child.name}" for child in node.body
                      if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return names


def _forbidden(checker: Fields, raw) -> tuple[str, ...]:
    names = tuple(raw or ())
    for index, name in enumerate(names):
        if not isinstance(name, str) or not _MODULE.match(name):
            checker.problem(raw.lines[index], f"forbidden_imports[{index}]", f"must be a module name, got {name!r}")
    return names


def _scenarios(checker: Fields, spec: SpecText, raw, tasks: list[Task], visibility: Visibility,
               limits: Limits, alias: str | None) -> tuple[ScenarioPlan, ...]:
    """The scenario list of one spec file joined with its scenario file's programs (by the index);
    each program takes the student's module as ``alias`` (the assignment's ``module_alias``) when
    there is one.

    Raises every problem found so far in ``checker`` (the spec's own included) at once."""
    assert spec.scenario_path is not None
    programs = {record["name"]: record for record in spec.scenario_index if record["top"]}
    lines = spec.scenario_text.splitlines(keepends=True)
    task_ids = [t.id for t in tasks]
    result: list[ScenarioPlan] = []
    named: set[str] = set()
    for index, item in enumerate(raw):
        where, line = f"scenarios[{index}]", raw.lines[index]
        values = checker.read(item, SCENARIO_FIELDS, where, line)
        sid = values["id"]
        if sid is None:
            continue
        item_lines = item.lines if isinstance(item, MarkedDict) else {}
        if sid in named:
            checker.problem(item_lines.get("id", line), f"{where}.id", f"scenario {sid!r} is listed twice")
        named.add(sid)
        record = programs.get(sid)
        if record is None:
            checker.problem(item_lines.get("id", line), f"{where}.id", f"scenario {sid!r} is not defined in "
                            f"{Path(spec.scenario_path).name}{did_you_mean(sid, programs)}")
        else:
            _check_program(checker, spec.scenario_path, record)
        if values["task"] is not None and values["task"] not in task_ids:
            checker.problem(item_lines.get("task", line), f"{where}.task",
                            f"unknown task {values['task']!r}{did_you_mean(values['task'], task_ids)}; "
                            f"tasks: {', '.join(task_ids)}")
        shown = values["visibility"] or visibility.value
        if shown != visibility.value:
            checker.problem(item_lines.get("visibility", line), f"{where}.visibility",
                            _visibility_problem(shown, visibility))
        if record is not None and sid not in {r.id for r in result}:
            source = textwrap.dedent("".join(lines[record["line"] - 1: record["end"]]))
            _check_alias(checker, spec.scenario_path, record, source, alias)
            time_limit = values["time_limit"] if values["time_limit"] is not None else limits.time
            result.append(ScenarioPlan(sid, values["title"] or sid, values["task"] or "",
                                       float(values["points"] or 0), visibility, float(time_limit), source,
                                       record["inputs"], spec.scenario_path, record["line"]))
    listed_file = Path(spec.path).name
    for name, record in programs.items():
        if record["scenario"] and name not in named:
            checker.problems.append(SpecError(spec.scenario_path, record["line"], name, f"scenario {name!r} is defined "
                                              f"in {Path(spec.scenario_path).name} but not listed in {listed_file}"))
    checker.raise_if_any()
    return tuple(result)


def _check_program(checker: Fields, path: str, record: dict) -> None:
    """A program runs alone in the sandbox: it takes the student's module and uses no global the
    sandbox lacks (its source alone was analysed by the index, as the sandbox compiles it)."""
    if not record["params"]:
        checker.problems.append(SpecError(path, record["line"], record["name"],
                                          "a scenario program takes the student's module as its first argument"))
        return
    missing = sorted(set(record["globals"]) - SANDBOX_GLOBALS - set(dir(builtins)))
    if missing:
        checker.problems.append(SpecError(
            path, record["line"], record["name"],
            f"the program uses {', '.join(map(repr, missing))}, which the sandbox does not have; "
            "a program may use only its arguments, np, attempt, plain and builtins"))


def _check_alias(checker: Fields, path: str, record: dict, source: str, alias: str | None) -> None:
    """The program takes the student's module under the assignment's ``module_alias``: feedback
    names it beside the program ("What the scenario ran (m is your module)")."""
    named = module_parameter(source)
    if alias is not None and record["params"] and named != alias:
        checker.problems.append(SpecError(path, record["line"], record["name"], (
            f"the program takes the student's module as {named!r}" if named else
            "the program's first parameter is not a plain name") +
            f", but assignment.yaml's module_alias is {alias!r}: name its first parameter {alias}"))


def _visibility_problem(given: str, expected: Visibility) -> str:
    if given not in (Visibility.PUBLIC.value, Visibility.HIDDEN.value):
        return f"must be public or hidden, got {given!r}"
    if given == Visibility.HIDDEN.value:
        return ("hidden scenarios belong in the instructor-only solutions/<assignment>/hidden.yaml, "
                "never in the folder students receive")
    return "a scenario in hidden.yaml is hidden; list public scenarios in assignment.yaml"


def _hidden_scenarios(hidden: SpecText, assignment_id: str, tasks: list[Task], limits: Limits,
                      public_ids: set[str], alias: str | None) -> tuple[ScenarioPlan, ...]:
    checker = Fields(hidden.path)
    top = checker.read(hidden.document, HIDDEN_FIELDS)
    if top["assignment"] is not None and top["assignment"] != assignment_id:
        checker.problem(hidden.document.lines["assignment"], "assignment",
                        f"is {top['assignment']!r} but the assignment is {assignment_id!r}")
    if top["scenario_file"] is not None and hidden.scenario_path is None:
        checker.problem(hidden.document.lines["scenario_file"], "scenario_file",
                        f"{Path(hidden.path).parent / top['scenario_file']} does not exist")
    checker.raise_if_any()
    scenarios = _scenarios(checker, hidden, top["scenarios"], tasks, Visibility.HIDDEN, limits, alias)
    clash = sorted(public_ids & {s.id for s in scenarios})
    if clash:
        raise SpecError(hidden.path, hidden.document.lines["scenarios"], "scenarios",
                        f"ids already used by public scenarios: {', '.join(clash)}")
    return scenarios
