"""The audit's vocabulary: kill-matrix cells, mutant statuses, diagnoses, findings and their severity, the
guarantees, and the records the analysis produces. A leaf module (with the result types it reads)."""

from __future__ import annotations

from dataclasses import field
from enum import Enum

from grader.audit.mutant import Mutant
from grader.records import record
from grader.results import Status


class Cell(str, Enum):
    PASSED = "passed"
    FAILED = "failed"     # the program ran and a check failed
    ERROR = "error"       # it raised, crashed, ran out of memory, or could not run
    TIMEOUT = "timeout"


class MutantStatus(str, Enum):
    KILLED = "killed"
    SURVIVED = "survived"
    EQUIVALENT = "equivalent"   # excluded by the instructor: not run


class Verdict(str, Enum):
    NAMED = "named"       # the feedback names (only) the mutant's own misconception
    WRONG = "wrong"       # it names another one: a wrong diagnosis
    NONE = "none"         # it names none
    TO_JUDGE = "to_judge"  # an automatic mutant's feedback names one: the author judges whether it is right


class Severity(str, Enum):
    FAIL = "fail"         # a guarantee: the audit exits non-zero
    WARN = "warn"


class FindingKind(str, Enum):
    # Each kind's severity is fixed: see SEVERITY below.
    REFERENCE_FAILS = "reference_fails"
    FLAKY = "flaky"
    FREE_POINTS = "free_points"
    POINTS_FOR_NOTHING = "points_for_nothing"
    POINTS_FOR_LIES = "points_for_lies"
    CROSS_TASK = "cross_task"
    NO_PROVIDED_NOTE = "no_provided_note"
    TASK_BLAMED = "task_blamed"
    NAMED_SURVIVES = "named_survives"
    WRONG_DIAGNOSIS = "wrong_diagnosis"
    AMBIGUOUS_DIAGNOSIS = "ambiguous_diagnosis"
    LOW_SCORE = "low_score"
    TIGHT_TIME = "tight_time"
    NO_DIAGNOSIS = "no_diagnosis"
    UNUSED_MISCONCEPTION = "unused_misconception"
    AUTOMATIC_SURVIVES = "automatic_survives"
    HIDDEN_ONLY = "hidden_only"
    NO_POINTS_LOST = "no_points_lost"
    KILLS_NOTHING = "kills_nothing"
    NO_FUNCTIONS = "no_functions"


SEVERITY = {kind: Severity.FAIL for kind in (
    FindingKind.REFERENCE_FAILS, FindingKind.FLAKY, FindingKind.FREE_POINTS, FindingKind.POINTS_FOR_NOTHING,
    FindingKind.POINTS_FOR_LIES, FindingKind.CROSS_TASK, FindingKind.NO_PROVIDED_NOTE, FindingKind.TASK_BLAMED,
    FindingKind.NAMED_SURVIVES, FindingKind.WRONG_DIAGNOSIS, FindingKind.AMBIGUOUS_DIAGNOSIS, FindingKind.LOW_SCORE)}


# The guarantees: each holds when no finding of its kinds was made. A failed one fails the audit.
GUARANTEES = {
    "reference_full": ((FindingKind.REFERENCE_FAILS, FindingKind.FLAKY),
                       "the reference earns every point on every seed"),
    "no_flaky": ((FindingKind.FLAKY,), "no scenario's verdict on the reference changes with the seed"),
    "handout_zero": ((FindingKind.FREE_POINTS,), "the handout earns no points"),
    "no_points_for_nothing": ((FindingKind.POINTS_FOR_NOTHING,),
                              "no scenario gives points when a task's functions return None or 0.0"),
    "no_points_for_lies": ((FindingKind.POINTS_FOR_LIES,),
                           "no scenario gives points to a lie: an object equal to everything, the input, an "
                           "impostor or lying subclass, a value that ignores its input, or a named lie"),
    "no_cross_task": ((FindingKind.CROSS_TASK,), "no mutant costs points in another task (a mutant of the provided "
                                                 "code only where a control shows the provided code is the cause)"),
    "engine_edits_said": ((FindingKind.NO_PROVIDED_NOTE, FindingKind.TASK_BLAMED),
                          "a mutant of the provided code that fails a task scenario is said to be the likely cause "
                          "there, and no misconception blames the task"),
    "named_killed": ((FindingKind.NAMED_SURVIVES,), "every named mutant is caught"),
    "named_diagnosed": ((FindingKind.WRONG_DIAGNOSIS,), "no named mutant gets a wrong diagnosis"),
    "no_ambiguous_diagnosis": ((FindingKind.AMBIGUOUS_DIAGNOSIS,),
                               "no misconception is named for named mutants of different ideas"),
    "min_score": ((FindingKind.LOW_SCORE,), "every task's automatic mutation score reaches --min-score"),
}


@record
class ScenarioInfo:
    id: str
    title: str
    task: str
    points: float
    visibility: str       # "public" or "hidden"
    time_limit: float
    file: str = ""        # the scenario file that defines it


@record
class Finding:
    kind: FindingKind
    subject: str          # the scenario, mutant or task it is about
    message: str          # what is wrong
    fix: str              # what to do about it

    @property
    def severity(self) -> Severity:
        return SEVERITY.get(self.kind, Severity.WARN)


@record
class ReferenceScenario:
    id: str
    passed_seeds: tuple[int, ...]
    failed: tuple[tuple[int, str, str], ...]   # (seed, cell, summary) of each seed it did not pass
    slowest: float
    time_limit: float

    @property
    def margin(self) -> float:
        return self.time_limit / self.slowest if self.slowest > 0 else float("inf")


@record
class Diagnosis:
    verdict: Verdict
    named: tuple[tuple[str, str], ...]   # (scenario id, misconception) of every failed scenario naming one
    controls: tuple[str, ...] = ()       # of those, the scenarios whose control failed (the provided code's cause)


@record
class Charge:
    task: str
    points: float
    scenarios: tuple[str, ...]


@record
class MutantOutcome:
    mutant: Mutant
    status: MutantStatus
    cells: dict[str, Cell] = field(default_factory=dict)
    killed_by: tuple[str, ...] = ()
    points_lost: float = 0.0
    charges: tuple[Charge, ...] = ()     # points lost in other tasks, undeclared: a finding each
    diagnosis: Diagnosis | None = None
    error: str | None = None             # the mutant could not be graded at all (its result's error)
    costs: tuple[Charge, ...] = ()       # every task it lost points in, its own included
    noted: tuple[str, ...] | None = None   # a mutant of the provided code: its failed task scenarios that say so
    unnoted: tuple[str, ...] = ()        # ... and those that do not


@record
class TaskScore:
    task: str
    named_killed: int
    named_total: int
    automatic_killed: int
    automatic_total: int                 # not counting the equivalent ones
    automatic_equivalent: int

    @property
    def score(self) -> float | None:
        return self.automatic_killed / self.automatic_total if self.automatic_total else None


@record
class Analysis:
    reference: tuple[ReferenceScenario, ...]
    free_points: tuple[tuple[str, float], ...]   # (scenario, points) the handout earns
    handout_score: float
    outcomes: tuple[MutantOutcome, ...]
    tasks: tuple[TaskScore, ...]
    findings: tuple[Finding, ...]
    baseline: frozenset[str] = frozenset()       # scenarios the reference passes on the mutants' seed

    @property
    def passed(self) -> bool:
        return not any(f.severity is Severity.FAIL for f in self.findings)

    def guarantees(self) -> dict[str, bool]:
        """Each guarantee of :data:`GUARANTEES`: whether it holds."""
        kinds = {f.kind for f in self.findings}
        return {name: not (set(of) & kinds) for name, (of, _) in GUARANTEES.items()}


def cell_of(status: Status) -> Cell:
    if status is Status.PASSED:
        return Cell.PASSED
    if status is Status.FAILED:
        return Cell.FAILED
    if status is Status.TIMEOUT:
        return Cell.TIMEOUT
    return Cell.ERROR
