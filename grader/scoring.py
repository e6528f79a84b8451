"""Scores from scenario results: pure arithmetic over data, for one submission and for a class.

For a class, :class:`StudentRow` is what a batch keeps per student (a few hundred bytes whatever the
feedback), so its memory stays flat in the number of submissions; :mod:`grader.summary` turns rows
into the class statistics of ``summary.json``.
"""

from __future__ import annotations

import sys
from array import array
from typing import TYPE_CHECKING

from grader.records import record
from grader.results import ScenarioResult, Status, SubmissionResult, TaskScore

if TYPE_CHECKING:
    from grader.spec import Plan

_NOT_RUN = float("nan")


def task_scores(plan: Plan, scenarios: tuple[ScenarioResult, ...]) -> tuple[TaskScore, ...]:
    """Points per task, in the spec's task order, for the tasks that had scenarios in this run."""
    scores = []
    for task in plan.tasks:
        mine = [s for s in scenarios if s.task == task.id]
        if mine:
            scores.append(TaskScore(task.id, task.title, round_points(sum(s.points for s in mine)),
                                    round_points(sum(s.max_points for s in mine))))
    return tuple(scores)


def total(scenarios: tuple[ScenarioResult, ...]) -> tuple[float, float]:
    """(score, max score)."""
    return round_points(sum(s.points for s in scenarios)), round_points(sum(s.max_points for s in scenarios))


def round_points(value: float) -> float:
    """Points rounded as every score is (six decimals)."""
    # Points are decimal fractions at most; keep 1/3-style sums readable and stable across runs.
    return round(value, 6)


# --------------------------------------------------------------------------- a class


@record
class Column:
    """A scenario as a gradebook column: shared by every row (strings interned)."""

    id: str
    title: str
    task: str
    points: float = 0.0   # what it is worth: a 0-point scenario (the provided engine's) shows pass/fail


# A scenario's status as one byte: its place here (0: no such scenario). A row or a class record
# keeps a class's statuses as bytes: a byte per scenario, not an object.
STATUS_CODES: tuple[Status | None, ...] = (None, *Status)
CODE_OF: dict[Status | None, int] = {status: code for code, status in enumerate(STATUS_CODES)}
_PASSED, _NOT_RUN_CODE = CODE_OF[Status.PASSED], CODE_OF[Status.NOT_RUN]


@record(slots=True)
class StudentRow:
    """One student's line: scores and per-scenario outcomes, no feedback.

    Per scenario it keeps the status alone, as a byte: the points follow from it, since only
    PASSED earns, and then all of the scenario's points (:mod:`grader.judge`).

    The error-row convention: a submission that could not be graded (no result at all, or a result
    whose ``error`` says why) scores 0 of the assignment's maximum, with the reason in ``error``:
    never an empty score, which an LMS would read as "no change"."""

    student_id: str
    score: float
    max_score: float | None
    error: str | None             # why it could not be graded (first line), or None
    has_result: bool              # a result file exists for it (the scenarios ran, or were meant to)
    columns: tuple[Column, ...]   # the scenarios this result had, in its order (shared tuple)
    statuses: bytes               # aligned with columns: STATUS_CODES places
    provided_changes: str = ""    # the parts of the provided engine it changed, for the gradebook
    late: bool = False            # late: the LMS's name says so (Canvas's _LATE_), or it came after --deadline
    # Set only by grader.adjustments (overrides, a late penalty), never stored with the result:
    points_set: tuple[tuple[int, float], ...] = ()   # (column index, points) an override gave a scenario
    before_penalty: float | None = None              # the score before the late penalty (None: no such policy)
    override: str = ""                               # what overrides changed, for the gradebook

    @classmethod
    def of(cls, student_id: str, result: SubmissionResult | None, error: str | None,
           max_score: float | None = None, *, late: bool = False) -> StudentRow:
        """A result's row; or, for ``result`` None, an error row saying ``error``, out of ``max_score``.
        ``late``: as the download's name says (:attr:`~grader.lms_names.Identity.late`)."""
        if result is None:
            return cls(sys.intern(student_id), 0.0, max_score, error or "not graded", False, (), b"", late=late)
        columns = _columns(tuple((s.id, s.title, s.task, s.max_points) for s in result.scenarios))
        statuses = bytes([CODE_OF[s.status] for s in result.scenarios])
        reason = result.error.splitlines()[0] if result.error else None
        changed = ("none of the provided engine (all its parts missing: another file)" if result.holds_no_engine
                   else "; ".join(change.name if change.kind == "changed" else f"{change.name} (removed)"
                                  for change in result.provided_changes))
        return cls(sys.intern(student_id), result.score, result.max_score, reason, True, columns, statuses,
                   changed, late)

    @property
    def graded(self) -> bool:
        return self.has_result and self.error is None

    @property
    def passed(self) -> bytes:
        """Aligned with ``columns``: 1 where the scenario passed."""
        return bytes([code == _PASSED for code in self.statuses])

    @property
    def points(self) -> array:
        """Aligned with ``columns``, as doubles: the points earned (as an override set them, where one
        did); NaN where the scenario did not run."""
        earned = array("d", (_NOT_RUN if code == _NOT_RUN_CODE else column.points if code == _PASSED else 0.0
                             for column, code in zip(self.columns, self.statuses)))
        for index, value in self.points_set:
            earned[index] = value
        return earned


def columns_of(plan: Plan) -> tuple[Column, ...]:
    """The gradebook's scenario columns for a batch of ``plan``: every scenario, in the spec's order."""
    return _columns(tuple((s.id, s.title, s.task, s.points) for s in plan.scenarios))


def max_score_of(plan: Plan) -> float:
    """The points a submission can earn on all of ``plan``'s scenarios."""
    return round_points(sum(s.points for s in plan.scenarios))


_COLUMN_SETS: dict[tuple, tuple[Column, ...]] = {}


def _columns(key: tuple) -> tuple[Column, ...]:
    """One shared tuple of columns per distinct scenario list (every row of a batch shares it)."""
    if key not in _COLUMN_SETS:
        _COLUMN_SETS[key] = tuple(Column(sys.intern(sid), sys.intern(title), sys.intern(task), float(worth))
                                  for sid, title, task, worth in key)
    return _COLUMN_SETS[key]


def scenario_order(rows: list[StudentRow]) -> list[Column]:
    """Scenarios in assignment order: the first error-free result's, then any others' new ones."""
    order: dict[str, Column] = {}
    for row in sorted((row for row in rows if row.has_result), key=lambda row: row.error is not None):
        for column in row.columns:
            order.setdefault(column.id, column)
    return list(order.values())
