"""The class report's view: every table and series its page, its CSV files and its plots show,
computed once from the class (:mod:`grader.class_data`) and its statistics
(:mod:`grader.class_stats`). Pure. The renderers (:mod:`grader.report.class_tables`,
:mod:`grader.report.class_html`, :mod:`grader.report.svg`) read only a :class:`ClassView`, so a
page can be made, and tested, from a view written by hand.
"""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass

import grader.class_data as class_data
from grader.adjustments import Notes
from grader.class_data import ClassData, Misconception, Runtime, ScenarioInfo, TaskInfo
from grader.class_stats import class_statistics, distribution
from grader.results import ProvidedChange
from grader.summary import Bin, Ungradable


@dataclass(frozen=True, slots=True)
class StudentLine:
    """A student's line in the table of students (``--with-students``)."""

    student_id: str
    name: str
    score: float
    max_score: float
    status: str                    # graded, or error: <why>
    late: bool
    scenarios_passed: int | None   # None: no result
    misconceptions: int            # distinct misconceptions its failures named


@dataclass(frozen=True, slots=True)
class ClassView:
    assignment: str
    title: str
    seed: int | None
    max_score: float
    submissions: int
    graded: int
    scenarios: tuple[ScenarioInfo, ...]                 # in the assignment's order
    tasks: tuple[TaskInfo, ...]
    statistics: dict                                    # class_stats.class_statistics over the graded rows
    histogram: tuple[Bin, ...]                          # of the total scores of the graded submissions
    ungradable: tuple[Ungradable, ...]
    status_mix: tuple[Counter, ...]                     # aligned with scenarios: graded submissions per status
    misconceptions: tuple[Misconception, ...]           # most common first
    runtimes: tuple[Runtime, ...]                       # aligned with scenarios
    isolation: tuple[tuple[tuple[str, ...], int], ...]  # each isolation reported, with how many results; most first
    provided_recorded: bool                             # False: no result records changes to the provided engine
    provided_changes: tuple[tuple[str, tuple[ProvidedChange, ...]], ...]   # (student, its changes)
    task_scores: dict[str, array]                       # per task, the graded submissions' points on it
    ignored: tuple[tuple[str | None, str | None], ...]  # (path, why): files of SUBMISSIONS not graded
    students: tuple[StudentLine, ...] | None = None     # None: the report names no student
    notes: Notes | None = None                          # overrides, late penalties, no submission (when asked)


def build_view(data: ClassData, with_students: bool = False) -> ClassView:
    """The view of ``data``; ``with_students``: with the table of students. With adjustments
    (``data.notes``), the scores' figures are of the final scores; the item statistics stay those of
    the scenarios as graded."""
    stats = class_statistics(data.rows, data.columns, {s.id: s.max_points for s in data.scenarios})
    if data.notes is not None:
        stats = {**stats, "scores": distribution([row.score for row in data.rows if row.graded],
                                                 data.max_score).to_dict()}
    summary = data.summary()
    recorded, changed = class_data.provided_changes(data)
    return ClassView(
        assignment=data.assignment, title=data.title, seed=data.seed, max_score=data.max_score,
        submissions=len(data.students), graded=len(data.graded), scenarios=data.scenarios, tasks=data.tasks,
        statistics=stats, histogram=summary.histogram, ungradable=summary.ungradable,
        status_mix=tuple(class_data.status_mix(data)), misconceptions=tuple(class_data.misconceptions(data)),
        runtimes=tuple(class_data.runtimes(data)), isolation=tuple(class_data.isolation_levels(data)),
        provided_recorded=recorded, provided_changes=tuple(changed), task_scores=class_data.task_scores(data),
        ignored=tuple((i.get("path"), i.get("why")) for i in data.ignored),
        students=tuple(_students(data)) if with_students else None, notes=data.notes)


def _students(data: ClassData) -> list[StudentLine]:
    lines = []
    for student in data.students:
        row = student.row
        lines.append(StudentLine(row.student_id, data.identity(row.student_id).display_name, row.score,
                                 row.max_score if row.max_score is not None else data.max_score,
                                 "graded" if row.error is None else f"error: {row.error}", row.late,
                                 sum(row.passed) if row.has_result else None,
                                 len({text for _, text in student.misconceptions})))
    return lines
