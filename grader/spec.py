"""The assignment spec: the rubric in YAML, the scenarios in Python, checked against each other.

Students receive ``exercises/<id>/assignment.yaml`` with the public scenarios; instructors keep
``solutions/<id>/hidden.yaml`` with the hidden ones. :func:`load_assignment` reads one or both
and returns a frozen :class:`Assignment`; every problem is a :class:`~grader.errors.SpecError`
naming the file, the line and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from grader.errors import SpecError
from grader.scenario import Scenario, load_scenarios
from grader.spec_yaml import Field, Fields, MarkedDict, MarkedList, did_you_mean, parse

SPEC_FILE = "assignment.yaml"
HIDDEN_SPEC_FILE = "hidden.yaml"

NUMBER = (int, float)
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")

PUBLIC_FIELDS = {
    "id": Field((str,), True, describe="a short identifier such as autodiff"),
    "title": Field((str,), True, describe="text"),
    "submission": Field((str,), True, describe="the file name students submit, such as autodiff.py"),
    "scenario_file": Field((str,), True, describe="the Python file beside this one that defines the scenarios"),
    "total_points": Field(NUMBER, describe="a number: the points of public and hidden scenarios together"),
    "time_limit": Field(NUMBER, default=5.0, describe="seconds of wall-clock time per scenario"),
    "import_time_limit": Field(NUMBER, default=10.0, describe="seconds to import the submission"),
    "memory_limit_mb": Field((int,), default=1024, describe="MiB of address space per process"),
    "output_limit_kb": Field((int,), default=64, describe="KiB of stdout/stderr kept per scenario"),
    "forbidden_imports": Field((list,), default=(), describe="a list of module names"),
    "tasks": Field((list,), True, describe="a list of tasks, each with id and title"),
    "scenarios": Field((list,), True, describe="a list of scenarios"),
}
HIDDEN_FIELDS = {
    "assignment": Field((str,), True, describe="the id of the assignment these scenarios extend"),
    "scenario_file": Field((str,), True, describe="the Python file beside this one that defines the scenarios"),
    "scenarios": Field((list,), True, describe="a list of scenarios"),
}
TASK_FIELDS = {"id": Field((str,), True, describe="an identifier"), "title": Field((str,), True, describe="text"),
               "functions": Field((list,), describe="a list of the student's functions, e.g. [Tensor.detach]")}
SCENARIO_FIELDS = {
    "id": Field((str,), True, describe="the name of the scenario's program function"),
    "title": Field((str,), True, describe="one line saying what the scenario checks"),
    "task": Field((str,), True, describe="the id of a task"),
    "points": Field(NUMBER, True, describe="a number of points (0 for a provided-engine check)"),
    "visibility": Field((str,), describe="public or hidden"),
    "time_limit": Field(NUMBER, describe="seconds (overrides the assignment's time_limit)"),
}


@dataclass(frozen=True)
class Limits:
    time: float
    import_time: float
    memory_mb: int
    output_bytes: int


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    functions: tuple[str, ...] = ()   # qualified names of the student's functions in the submission


@dataclass(frozen=True)
class ScenarioSpec:
    """A scenario as graded: its code plus what the rubric says about it."""

    id: str
    title: str
    task: str
    points: float
    visibility: str  # "public" or "hidden"
    time_limit: float
    code: Scenario


@dataclass(frozen=True)
class Assignment:
    id: str
    title: str
    submission: str
    directory: Path
    tasks: tuple[Task, ...]
    scenarios: tuple[ScenarioSpec, ...]
    limits: Limits
    forbidden_imports: tuple[str, ...]
    total_points: float | None
    digest: str  # sha256 over every spec and scenario file: a regrade reproduces only when equal
    hidden_directory: Path | None = None

    def select(self, visibility: str) -> tuple[ScenarioSpec, ...]:
        """The scenarios to run: ``"public"`` only, or ``"all"``."""
        return tuple(s for s in self.scenarios if visibility == "all" or s.visibility == "public")



def load_assignment(directory: str | Path, hidden: str | Path | None = None) -> Assignment:
    """Load ``directory/assignment.yaml`` and, when ``hidden`` is a folder, its ``hidden.yaml``."""
    directory = Path(directory)
    spec_path = directory / SPEC_FILE
    if not spec_path.is_file():
        raise SpecError(str(spec_path), None, None, f"no {SPEC_FILE} here; pass --assignment with the folder that holds it")
    checker = Fields(str(spec_path))
    document = parse(spec_path.read_text(encoding="utf-8"), str(spec_path))
    top = checker.read(document, PUBLIC_FIELDS)
    tasks = _tasks(checker, document, top["tasks"])
    limits = Limits(float(top["time_limit"] or 5.0), float(top["import_time_limit"] or 10.0),
                    int(top["memory_limit_mb"] or 1024), int(top["output_limit_kb"] or 64) * 1024)
    forbidden = _forbidden(checker, document, top["forbidden_imports"])
    _check_names(checker, document, top)
    if top["scenario_file"] is None or top["scenarios"] is None:
        checker.raise_if_any()

    from grader.digests import sha256
    digest = sha256(spec_path.read_bytes())
    scenarios = _scenarios(checker, spec_path, document, top, tasks, "public", limits, digest)
    hidden_directory = None
    if hidden is not None:
        hidden_directory = Path(hidden)
        scenarios += _load_hidden(hidden_directory, top["id"], tasks, limits, digest, {s.id for s in scenarios})
    total = top["total_points"]
    if hidden is not None and total is not None and abs(sum(s.points for s in scenarios) - total) > 1e-9:
        raise SpecError(str(spec_path), document.lines.get("total_points"), "total_points",
                        f"is {total} but the public and hidden scenarios add up to {sum(s.points for s in scenarios)}")
    return Assignment(id=top["id"], title=top["title"], submission=top["submission"], directory=directory,
                      tasks=tuple(tasks), scenarios=scenarios, limits=limits, forbidden_imports=forbidden,
                      total_points=total, digest=digest.hexdigest(), hidden_directory=hidden_directory)


def find_solutions(assignment_dir: str | Path) -> Path:
    """The instructor-only folder of an assignment: ``solutions/<id>`` in the nearest folder up
    from the assignment that has one (``exercises/autodiff`` -> ``solutions/autodiff``)."""
    assignment_dir = Path(assignment_dir).resolve()
    spec_path = assignment_dir / SPEC_FILE
    assignment_id = parse(spec_path.read_text(encoding="utf-8"), str(spec_path)).get("id") if spec_path.is_file() else None
    if not isinstance(assignment_id, str):
        return assignment_dir  # load_assignment reports what is wrong with the spec
    looked = []
    for folder in assignment_dir.parents:
        candidate = folder / "solutions" / assignment_id
        if (candidate / HIDDEN_SPEC_FILE).is_file():
            return candidate
        looked.append(str(candidate))
        if (folder / ".git").exists():
            break
    raise SpecError(str(spec_path), None, None, f"the hidden scenarios of {assignment_id!r} were not found "
                    f"(no {HIDDEN_SPEC_FILE} in {', '.join(looked[:3])}); pass --solutions DIR")


def _check_names(checker: Fields, document: MarkedDict, top: dict) -> None:
    if top["id"] is not None and not _ID.match(top["id"]):
        checker.problem(document.lines["id"], "id", "must be letters, digits, _ or - (it names files)")
    submission = top["submission"]
    if submission is not None and (not submission.endswith(".py") or "/" in submission or submission.startswith(".")):
        checker.problem(document.lines["submission"], "submission", "must be a plain file name ending in .py")


def _tasks(checker: Fields, document: MarkedDict, raw) -> list[Task]:
    tasks = []
    for index, item in enumerate(raw or []):
        line = raw.lines[index] if isinstance(raw, MarkedList) else None
        values = checker.read(item, TASK_FIELDS, f"tasks[{index}]", line)
        if values["id"] is not None:
            tasks.append(Task(values["id"], values["title"] or values["id"], tuple(values["functions"] or ())))
    return tasks


def _forbidden(checker: Fields, document: MarkedDict, raw) -> tuple[str, ...]:
    names = tuple(raw or ())
    for index, name in enumerate(names):
        if not isinstance(name, str) or not re.match(r"^[A-Za-z_][\w.]*$", name):
            checker.problem(raw.lines[index], f"forbidden_imports[{index}]", f"must be a module name, got {name!r}")
    return names


def _scenarios(checker: Fields, spec_path: Path, document: MarkedDict, top: dict, tasks: list[Task],
               visibility: str, limits: Limits, digest) -> tuple[ScenarioSpec, ...]:
    """Read the scenario list of one spec file and join it with its scenario file's code.

    Raises every problem found so far in ``checker`` (the spec's own included) at once."""
    code_path = spec_path.parent / top["scenario_file"]
    if not code_path.is_file():
        raise SpecError(str(spec_path), document.lines["scenario_file"], "scenario_file",
                        f"{code_path} does not exist")
    digest.update(code_path.read_bytes())
    defined = load_scenarios(code_path)
    task_ids = [t.id for t in tasks]
    raw = top["scenarios"]
    result, named = [], set()
    for index, item in enumerate(raw):
        values = checker.read(item, SCENARIO_FIELDS, f"scenarios[{index}]", raw.lines[index])
        where, line = f"scenarios[{index}]", raw.lines[index]
        sid = values["id"]
        if sid is None:
            continue
        lines = item.lines if isinstance(item, MarkedDict) else {}
        if sid in named:
            checker.problem(lines.get("id", line), f"{where}.id", f"scenario {sid!r} is listed twice")
        named.add(sid)
        if sid not in defined:
            checker.problem(lines.get("id", line), f"{where}.id",
                            f"scenario {sid!r} is not defined in {code_path.name}{did_you_mean(sid, defined)}")
        if values["task"] is not None and values["task"] not in task_ids:
            checker.problem(lines.get("task", line), f"{where}.task",
                            f"unknown task {values['task']!r}{did_you_mean(values['task'], task_ids)}; "
                            f"tasks: {', '.join(task_ids)}")
        shown = values["visibility"] or visibility
        if shown != visibility:
            checker.problem(lines.get("visibility", line), f"{where}.visibility", _visibility_problem(shown, visibility))
        if values["points"] is not None and values["points"] < 0:
            checker.problem(lines.get("points", line), f"{where}.points", "must not be negative")
        if sid in defined and sid not in [r.id for r in result]:
            result.append(ScenarioSpec(sid, values["title"] or sid, values["task"] or "", float(values["points"] or 0),
                                       visibility, float(values["time_limit"] or limits.time), defined[sid]))
    for sid, code in defined.items():
        if sid not in named:
            checker.problems.append(SpecError(str(code_path), code.lineno, sid, f"scenario {sid!r} is defined in "
                                              f"{code_path.name} but not listed in {spec_path.name}"))
    checker.raise_if_any()
    return tuple(result)


def _visibility_problem(given: str, expected: str) -> str:
    if given not in ("public", "hidden"):
        return f"must be public or hidden, got {given!r}"
    if given == "hidden":
        return ("hidden scenarios belong in the instructor-only solutions/<assignment>/hidden.yaml, "
                "never in the folder students receive")
    return "a scenario in hidden.yaml is hidden; list public scenarios in assignment.yaml"


def _load_hidden(directory: Path, assignment_id: str, tasks: list[Task], limits: Limits, digest,
                 public_ids: set[str]) -> tuple[ScenarioSpec, ...]:
    spec_path = directory / HIDDEN_SPEC_FILE
    if not spec_path.is_file():
        raise SpecError(str(spec_path), None, None,
                        f"the hidden scenarios were not found: no {HIDDEN_SPEC_FILE} in {directory}")
    checker = Fields(str(spec_path))
    document = parse(spec_path.read_text(encoding="utf-8"), str(spec_path))
    top = checker.read(document, HIDDEN_FIELDS)
    if top["assignment"] is not None and top["assignment"] != assignment_id:
        checker.problem(document.lines["assignment"], "assignment",
                        f"is {top['assignment']!r} but the assignment is {assignment_id!r}")
    checker.raise_if_any()
    digest.update(spec_path.read_bytes())
    scenarios = _scenarios(checker, spec_path, document, top, tasks, "hidden", limits, digest)
    clash = sorted(public_ids & {s.id for s in scenarios})
    if clash:
        raise SpecError(str(spec_path), document.lines["scenarios"], "scenarios",
                        f"ids already used by public scenarios: {', '.join(clash)}")
    return scenarios
