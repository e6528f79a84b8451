"""A class's results, condensed for its report and its gradebooks, and their tallies: pure, no I/O.

:func:`build_class` takes the documents of ``OUT/results`` (read by :mod:`grader.outdir`), the
batch's ``summary.json`` and the students' identities, and keeps per student what the report
needs (a :class:`~grader.scoring.StudentRow`, and per scenario its status, duration and any
misconception), so a class of thousands stays small in memory. The tallies (:func:`status_mix`,
:func:`misconceptions`, :func:`runtimes`, :func:`isolation_levels`, :func:`provided_changes`,
:func:`task_scores`) are what the report's view (:mod:`grader.report.class_view`) is made of, once;
every tally counts graded submissions only (an ungradable one ran nothing), except isolation,
which counts every result.
"""

from __future__ import annotations

import math
import statistics
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from grader.adjustments import NO_SUBMISSION, Notes
from grader.lms_names import Identity, NameSystem
from grader.records import record
from grader.results import ProvidedChange, Status, SubmissionResult
from grader.scoring import STATUS_CODES, Column, StudentRow
from grader.summary import ClassSummary, summarize

UNREADABLE = "its result file cannot be read (damaged or from another grader); rerun grader grade with --force"


@record
class ScenarioInfo:
    id: str
    title: str
    task: str
    max_points: float
    visibility: str               # public or hidden


@record
class TaskInfo:
    id: str
    title: str
    max_score: float


# A duration kept in 4 bytes: whole microseconds (results round durations to them, so exactly), the
# largest value meaning "not in the result".
NO_DURATION = 0xFFFFFFFF


def _microseconds(seconds: float) -> int:
    if not math.isfinite(seconds):
        return NO_DURATION
    return min(max(round(seconds * 1e6), 0), NO_DURATION - 1)


def _no_durations(count: int) -> array:
    return array("I", [NO_DURATION]) * count


@record(slots=True)
class StudentRecord:
    """What the report keeps of one student: a few hundred bytes, so that a class of thousands fits."""

    row: StudentRow
    placed: bytes | None                     # the status codes in ClassData.scenarios' order, when the row's
                                             # are in another (None: the row's own, the usual case)
    microseconds: array                      # array('I') aligned with ClassData.scenarios: each duration;
                                             # NO_DURATION: not in the result
    misconceptions: tuple[tuple[int, str], ...]  # (scenario index, misconception) for each failure naming one
    isolation: tuple[str, ...] = ()          # shared by every record with the same levels
    provided_changes: tuple[ProvidedChange, ...] | None = None   # None: not recorded
    modified: float | None = None            # when the result was written (POSIX time)

    @property
    def student_id(self) -> str:
        return self.row.student_id

    @property
    def status_codes(self) -> bytes:
        """Aligned with ClassData.scenarios: :data:`~grader.scoring.STATUS_CODES` places (0: not in the result)."""
        return self.row.statuses if self.placed is None else self.placed

    def padded(self, width: int) -> StudentRecord:
        """This record for a class of ``width`` scenarios (those after its own: not in its result)."""
        missing = width - len(self.status_codes)
        if missing <= 0:
            return self
        return replace(self, placed=self.status_codes + bytes(missing),
                       microseconds=self.microseconds + _no_durations(missing))


@dataclass
class ClassData:
    assignment: str
    title: str
    seed: int | None
    max_score: float
    scenarios: tuple[ScenarioInfo, ...]
    tasks: tuple[TaskInfo, ...]
    students: list[StudentRecord]                               # sorted by student id
    ignored: list[dict] = field(default_factory=list)           # summary.json's: {path, why}
    identities: dict[str, Identity] = field(default_factory=dict)
    notes: Notes | None = None          # the adjustments made to the rows (grader.adjustments), when any

    @property
    def rows(self) -> list[StudentRow]:
        return [student.row for student in self.students]

    def gradebook_students(self) -> Iterable[tuple[StudentRecord, Identity]]:
        """What an LMS gradebook holds: each student with its identity, then (``--missing zero``) each
        roster student without a submission, an error row of 0 saying so, in the roster's identity."""
        for student in self.students:
            yield student, self.identity(student.student_id)
        for missing in (self.notes.missing or ()) if self.notes is not None else ():
            row = StudentRow.of(missing.key, None, NO_SUBMISSION, self.max_score)
            width = len(self.scenarios)
            yield StudentRecord(row, bytes(width), _no_durations(width), ()), missing.identity

    @property
    def graded(self) -> list[StudentRecord]:
        return [student for student in self.students if student.row.graded]

    @property
    def columns(self) -> tuple[Column, ...]:
        return tuple(Column(s.id, s.title, s.task, s.max_points) for s in self.scenarios)

    def identity(self, student_id: str) -> Identity:
        return self.identities.get(student_id) or Identity(NameSystem.PLAIN, student_id)

    def summary(self) -> ClassSummary:
        """:func:`grader.summary.summarize` over these rows (what ``summary.json`` holds)."""
        return summarize(self.rows, max_score=self.max_score, columns=self.columns)


def build_class(documents: Iterable[tuple[str, dict, float | None]], summary: dict,
                identities: dict[str, Identity] | None = None) -> ClassData:
    """The class from its result documents ``(student_id, document, modified)`` and its summary
    (see :class:`ClassBuilder`)."""
    builder = ClassBuilder(summary, identities)
    for student_id, document, modified in documents:
        builder.add(student_id, document, modified)
    return builder.build()


class ClassBuilder:
    """A class built from its result documents one at a time (each dropped once added, so a class
    of thousands stays small), then from its summary. A document that is not a result becomes an
    error row saying so; students in the summary's ``ungradable`` list without a result get their
    error row from it. Scenarios are in the order the results list them (the assignment's), a
    scenario only some results have after the others."""

    def __init__(self, summary: dict, identities: dict[str, Identity] | None = None):
        self.summary, self.identities = summary, dict(identities or {})
        self.order: dict[str, ScenarioInfo] = {}
        self.index: dict[str, int] = {}
        self.placements: dict[tuple[str, ...], tuple[int, ...] | None] = {}  # per scenario list: see _placement
        self.task_titles: dict[str, str] = {}
        self.assignment = ""
        self.students: list[StudentRecord] = []
        self.shared: dict[tuple, tuple] = {}  # one tuple per distinct isolation, and per misconception list

    def add(self, student_id: str, document: dict, modified: float | None) -> SubmissionResult | None:
        """Add a student's stored document; returns the result it holds (None: it holds none)."""
        result = result_of(document)
        if result is None:
            row = StudentRow.of(student_id, None, UNREADABLE, self.summary.get("max_score"),
                                late=self._late(student_id))
            self.students.append(StudentRecord(row, bytes(len(self.index)), _no_durations(len(self.index)),
                                               (), (), None, modified))
            return None
        self.assignment = self.assignment or result.assignment
        ids = tuple(s.id for s in result.scenarios)
        if ids not in self.placements:     # most results list the same scenarios: look at each list once
            self.placements[ids] = self._placement(result)
        self.students.append(self._record(student_id, result, self.placements[ids], "provided_changes" in document,
                                          modified))
        return result

    def _placement(self, result: SubmissionResult) -> tuple[int, ...] | None:
        """Where each of ``result``'s scenarios is in the class's order (new ones added to it); None
        when they are its first ones, in order."""
        for s in result.scenarios:
            if s.id not in self.order:
                self.index[s.id] = len(self.order)
                self.order[s.id] = ScenarioInfo(s.id, s.title, s.task, s.max_points, s.visibility.value)
        for task in result.tasks:
            self.task_titles.setdefault(task.id, task.title)
        places = tuple(self.index[s.id] for s in result.scenarios)
        return None if places == tuple(range(len(places))) else places

    def _record(self, student_id: str, result: SubmissionResult, places: tuple[int, ...] | None,
                recorded_changes: bool, modified: float | None) -> StudentRecord:
        row = StudentRow.of(student_id, result, None, late=self._late(student_id))
        width = len(self.index)
        durations = _no_durations(width)
        found: list[tuple[int, str]] = []
        for i, scenario in enumerate(result.scenarios):
            if places is not None:
                i = places[i]
            durations[i] = _microseconds(scenario.duration)
            if not scenario.passed and scenario.feedback.misconception:
                found.append((i, sys.intern(scenario.feedback.misconception)))
        placed = None
        if places is not None:
            codes = bytearray(width)
            for place, code in zip(places, row.statuses):
                codes[place] = code
            placed = bytes(codes)
        isolation = tuple(sys.intern(level) for level in result.isolation)
        return StudentRecord(row, placed, durations, self._shared(tuple(found)), self._shared(isolation),
                             # Results before schema version 2 do not record provided_changes at all.
                             result.provided_changes if recorded_changes else None, modified)

    def _late(self, student_id: str) -> bool:
        identity = self.identities.get(student_id)
        return identity is not None and identity.late

    def _shared(self, value: tuple) -> tuple:
        return self.shared.setdefault(value, value)

    def build(self) -> ClassData:
        summary = self.summary
        _add_summary_scenarios(self.order, summary)
        scenarios = tuple(self.order.values())
        max_score = summary.get("max_score")
        if max_score is None:
            max_score = math.fsum(scenario.max_points for scenario in scenarios)
        width = len(scenarios)
        students = [student.padded(width) for student in self.students]
        seen = {student.student_id for student in students}
        for entry in summary.get("ungradable") or ():
            student_id = entry.get("student_id")
            if isinstance(student_id, str) and student_id not in seen:
                seen.add(student_id)
                row = StudentRow.of(student_id, None, str(entry.get("reason") or "not graded"), max_score,
                                    late=self._late(student_id))
                students.append(StudentRecord(row, bytes(width), _no_durations(width), ()))
        students.sort(key=lambda student: student.student_id)
        tasks = tuple(TaskInfo(task, self.task_titles.get(task, task),
                               math.fsum(s.max_points for s in scenarios if s.task == task))
                      for task in dict.fromkeys(s.task for s in scenarios))
        return ClassData(str(summary.get("assignment") or self.assignment), str(summary.get("title") or ""),
                         summary.get("seed"), float(max_score), scenarios, tasks, students,
                         list(summary.get("ignored") or ()), self.identities)


def result_of(document: dict) -> SubmissionResult | None:
    """The result a stored document holds (its derived views left out), or None when it holds none."""
    try:
        return SubmissionResult.from_dict({k: v for k, v in document.items() if k in SubmissionResult.field_names()})
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _add_summary_scenarios(order: dict[str, ScenarioInfo], summary: dict) -> None:
    """The summary's scenarios no result lists (a batch where nothing could be graded)."""
    points = {s.get("id"): s.get("max_points") for s in (summary.get("statistics") or {}).get("scenarios", ())}
    for s in summary.get("scenarios") or ():
        if s.get("id") not in order:
            order[s["id"]] = ScenarioInfo(s["id"], s.get("title", ""), s.get("task", ""),
                                          float(points.get(s["id"]) or 0.0), "public")


# --------------------------------------------------------------------------- tallies


def status_mix(data: ClassData) -> list[Counter]:
    """Per scenario, how many graded submissions ended in each status."""
    mix: list[Counter] = [Counter() for _ in data.scenarios]
    for student in data.graded:
        for i, code in enumerate(student.status_codes):
            if code:
                mix[i][STATUS_CODES[code]] += 1
    return mix


@record
class Misconception:
    text: str
    students: int                          # graded submissions that showed it (once each)
    scenarios: tuple[tuple[str, int], ...]  # (scenario id, submissions showing it there), most first


def misconceptions(data: ClassData) -> list[Misconception]:
    """Every misconception a failure named, with how many submissions showed it and where; most first."""
    students: Counter = Counter()
    where: dict[str, Counter] = {}
    for student in data.graded:
        for text in {text for _, text in student.misconceptions}:
            students[text] += 1
        for i, text in set(student.misconceptions):
            where.setdefault(text, Counter())[data.scenarios[i].id] += 1
    order = {s.id: i for i, s in enumerate(data.scenarios)}
    return sorted((Misconception(text, count, tuple(sorted(where[text].items(), key=lambda kv: (-kv[1], order[kv[0]]))))
                   for text, count in students.items()), key=lambda m: (-m.students, m.text))


@record
class Runtime:
    scenario: str
    runs: int
    median: float | None
    p90: float | None
    max: float | None


def runtimes(data: ClassData) -> list[Runtime]:
    """Per scenario, the wall-clock durations of its runs in graded submissions (seconds)."""
    graded = [(student.status_codes, student.microseconds) for student in data.graded]
    ran = frozenset(code for code, status in enumerate(STATUS_CODES) if status not in (None, Status.NOT_RUN))
    found = []
    for i, s in enumerate(data.scenarios):  # one scenario's durations at a time, as doubles
        t = array("d", (durations[i] / 1e6 for codes, durations in graded
                        if codes[i] in ran and durations[i] != NO_DURATION))
        found.append(Runtime(s.id, len(t), statistics.median(t) if t else None, _quantile(t, 0.9) if t else None,
                             max(t) if t else None))
    return found


def isolation_levels(data: ClassData) -> list[tuple[tuple[str, ...], int]]:
    """Each isolation the sandbox reported, with how many results had it; most first."""
    seen = Counter(student.isolation for student in data.students if student.row.has_result)
    return sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))


def provided_changes(data: ClassData) -> tuple[bool, list[tuple[str, tuple[ProvidedChange, ...]]]]:
    """Whether any result records changes to the provided engine, and the submissions with some."""
    recorded = [student for student in data.students if student.provided_changes is not None]
    return bool(recorded), [(s.student_id, s.provided_changes) for s in recorded if s.provided_changes]


def task_scores(data: ClassData) -> dict[str, array]:
    """Per task, the graded submissions' points on it (doubles)."""
    by_task: dict[str, list[int]] = {}
    for i, scenario in enumerate(data.scenarios):
        by_task.setdefault(scenario.task, []).append(i)
    scores: dict[str, array] = {task.id: array("d") for task in data.tasks}
    for student in data.graded:
        earned = {column.id: value for column, value in zip(student.row.columns, student.row.points)}
        for task, indices in by_task.items():
            values = (earned.get(data.scenarios[i].id, 0.0) for i in indices)
            scores.setdefault(task, array("d")).append(math.fsum(0.0 if math.isnan(v) else v for v in values))
    return scores


def _quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile by linear interpolation between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)

