"""Result data: what grading produced, as frozen dataclasses. Reporters only read these.

``to_dict``/``from_dict`` give the native JSON form (schema ``grader/schema/result.schema.json``);
``from_dict(to_dict(r)) == r`` holds, which is what lets a batch resume from files on disk.
"""

from __future__ import annotations

import functools
from dataclasses import field, fields
from enum import Enum

from grader.records import record
from grader.visibility import Scope, Visibility

# The name of the provided engine's top-level statements (imports, globals) as one part (grader.provided).
MODULE_LEVEL = "module-level code"

SCHEMA_VERSION = 2


class Status(str, Enum):
    """How a scenario ended. Only PASSED earns points."""

    PASSED = "passed"        # the check accepted every observation
    FAILED = "failed"        # the program ran, a value was wrong
    ERROR = "error"          # student code raised an exception (NotImplementedError included)
    TIMEOUT = "timeout"      # wall-clock or CPU limit
    MEMORY = "memory"        # memory limit (MemoryError, or killed for memory)
    CRASHED = "crashed"      # the process exited or died by a signal without a result, or sent garbage
    NOT_RUN = "not_run"      # never started: the submission could not be imported, or grading stopped


@record
class Feedback:
    """What a student needs to understand a scenario's outcome without reading our source."""

    summary: str = ""                 # one line
    what: str | None = None           # the observation that was checked
    expected: str | None = None
    got: str | None = None
    misconception: str | None = None  # the likely misunderstanding, when the answer is a known wrong one
    traceback: str | None = None      # trimmed to the student's frames and the scenario program
    stdout: str = ""                  # captured, bounded; shown, never parsed
    stderr: str = ""
    provided_note: str | None = None  # a task scenario that failed while the provided code was changed: which parts
    control_failed: bool = False      # the check's control (the program with the provided code alone) failed


@record
class ScenarioResult:
    """One scenario's outcome for one submission: its status, points, feedback and time."""

    id: str
    title: str
    task: str
    points: float
    max_points: float
    status: Status
    feedback: Feedback
    duration: float               # seconds, wall-clock, as measured by the grader
    visibility: Visibility
    program: str | None = None    # the program's source, for public scenarios only

    @property
    def passed(self) -> bool:
        return self.status is Status.PASSED


@record
class ProvidedChange:
    """A part of the provided code (the handout's engine) that the submission changed or removed."""

    name: str                 # "Tensor.backward", "Tensor" (its class body), "module-level code"
    kind: str                 # "changed" or "removed"
    first_line: int | None    # where it is in the submission (None: removed)
    last_line: int | None
    where: str | None = None  # the same as the student finds it in a notebook: "cell 4, lines 30-69"


@record
class TaskScore:
    """A task's points in one submission (its scenarios' sum)."""

    id: str
    title: str
    score: float
    max_score: float


@record
class SubmissionResult:
    """Everything grading one submission produced: the native result (``grader check --json``)."""

    assignment: str
    assignment_digest: str
    submission: str               # the file graded, as given
    submission_sha256: str
    seed: int
    visibility: Scope             # which scenarios ran
    score: float
    max_score: float
    tasks: tuple[TaskScore, ...]
    scenarios: tuple[ScenarioResult, ...]
    grader_version: str
    isolation: tuple[str, ...]    # what the sandbox achieved, e.g. ("uid-drop", "landlock", "rlimits")
    timings: dict = field(default_factory=dict)  # seconds: import, scenarios, total
    error: str | None = None      # why the submission could not be graded at all (then score is 0)
    import_stdout: str = ""       # what the submission printed while it was imported: bounded, shown, never parsed
    import_stderr: str = ""
    student_id: str | None = None  # whose it is, in a batch (None for grader check)
    provided_changes: tuple[ProvidedChange, ...] = ()  # parts of the provided engine it changed
    warnings: tuple[str, ...] = ()  # what the submission's format left out (a notebook's magics, say)
    schema_version: int = SCHEMA_VERSION

    @property
    def holds_no_engine(self) -> bool:
        """The file holds none of the provided engine (another file altogether): every provided
        function and class is missing (its own top-level statements may be anything), and there
        are several."""
        changes = self.provided_changes
        return len(changes) >= 3 and all(change.kind == "removed" or change.name == MODULE_LEVEL for change in changes)

    @property
    def all_passed(self) -> bool:
        return self.error is None and all(s.passed for s in self.scenarios)

    def to_dict(self) -> dict:
        # Field by field rather than dataclasses.asdict, which deep-copies every value: the values
        # here are immutable already (timings is copied), and a batch converts one per submission.
        data = _fields_of(self)
        data["tasks"] = [_fields_of(task) for task in self.tasks]
        data["scenarios"] = [{**_fields_of(scenario), "status": scenario.status.value,
                              "visibility": scenario.visibility.value, "feedback": _fields_of(scenario.feedback)}
                             for scenario in self.scenarios]
        data["visibility"] = self.visibility.value
        data["isolation"], data["timings"] = list(self.isolation), dict(self.timings)
        data["provided_changes"] = [_fields_of(change) for change in self.provided_changes]
        data["warnings"] = list(self.warnings)
        return data

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """The keys of :meth:`to_dict` (a document may hold more: reporters' derived views)."""
        return _field_names(cls)  # type: ignore[arg-type]  # a class is hashable

    @classmethod
    def from_dict(cls, data: dict) -> SubmissionResult:
        scenarios = tuple(
            ScenarioResult(**{**s, "status": _STATUS_OF.get(s["status"]) or Status(s["status"]),
                              "visibility": _VISIBILITY_OF.get(s["visibility"]) or Visibility(s["visibility"]),
                              "feedback": Feedback(**s["feedback"])})
            for s in data["scenarios"])
        return cls(**{**data, "scenarios": scenarios, "tasks": tuple(TaskScore(**t) for t in data["tasks"]),
                      "visibility": Scope(data["visibility"]), "isolation": tuple(data["isolation"]),
                      "provided_changes": tuple(ProvidedChange(**c) for c in data.get("provided_changes", ())),
                      "warnings": tuple(data.get("warnings", ()))})


# Enum(value) takes microseconds (the mixin's lookup path); a class report reads 40 per result.
_STATUS_OF = {status.value: status for status in Status}
_VISIBILITY_OF = {visibility.value: visibility for visibility in Visibility}


def _fields_of(record) -> dict:
    """A dataclass instance's fields as a dict, in declaration order, values as they are."""
    return {name: getattr(record, name) for name in _field_names(type(record))}  # type: ignore[arg-type]


@functools.cache
def _field_names(kind: type) -> tuple[str, ...]:
    return tuple(item.name for item in fields(kind))
