"""An instructor's grade overrides (``grader grade --overrides FILE``): a CSV read and checked against
the assignment, pure, over the file's text.

Columns (named in a header row, in any order, without case or spaces around them): ``student_id``
(as the gradebook names the student), ``points``, ``comment`` (why: it is listed with every
override), and optionally ``scenario``: a row with a scenario id sets that scenario's points, one
without sets the student's score. Every problem is reported at once, ``FILE:LINE: message``, before
anything is graded or written: an unknown column or scenario (with "did you mean"), points that are
not a number from 0 to the maximum, a row without a student or a comment, the same student (and
scenario) twice. That a student is one of the class is checked once the class is found
(:func:`unknown_students`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping

from grader.errors import UsageError
from grader.records import record
from grader.scoring import round_points
from grader.spec_yaml import did_you_mean

COLUMNS = ("student_id", "points", "comment", "scenario")
REQUIRED = ("student_id", "points", "comment")


@record
class Override:
    """One row: ``scenario`` None sets the student's score to ``points``, else that scenario's points."""

    student_id: str
    points: float
    comment: str
    scenario: str | None = None
    line: int = 0                      # in the file, for messages


def read_overrides(text: str, source: str, scenario_points: Mapping[str, float],
                   max_score: float) -> tuple[Override, ...]:
    """The overrides in ``text`` (the file ``source``), checked against the assignment's scenarios
    (``scenario_points``: each id's points) and its ``max_score``; a :class:`UsageError` listing every
    problem."""
    rows = list(csv.reader(io.StringIO(text.removeprefix("\ufeff"))))
    if not rows or not any(cell.strip() for cell in rows[0]):
        raise UsageError(f"{source}: the overrides file is empty; its first row names the columns: "
                         "student_id,points,comment (and scenario, to set one scenario's points)")
    header = [cell.strip().lower() for cell in rows[0]]
    problems = [f"{source}:1: column {name!r} is not one of {', '.join(COLUMNS)}{did_you_mean(name, COLUMNS)}"
                for name in header if name not in COLUMNS]
    problems += [f"{source}:1: no {name} column (the columns: student_id,points,comment[,scenario])"
                 for name in REQUIRED if name not in header]
    if problems:
        raise UsageError("\n".join(problems))
    at = {name: header.index(name) for name in COLUMNS if name in header}
    found: list[Override] = []
    seen: dict[tuple[str, str | None], int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue

        def cell(name: str, row: list[str] = row) -> str:
            return row[at[name]].strip() if name in at and at[name] < len(row) else ""

        student, comment, scenario = cell("student_id"), cell("comment"), cell("scenario") or None
        where = f"{source}:{line}"
        if not student:
            problems.append(f"{where}: no student_id")
            continue
        if scenario is not None and scenario not in scenario_points:
            problems.append(f"{where}: {student}: scenario {scenario!r} is not one of the assignment's"
                            f"{did_you_mean(scenario, scenario_points)}")
            continue
        most = scenario_points[scenario] if scenario is not None else max_score
        points = _number(cell("points"))
        if points is None or not 0 <= points <= most:
            problems.append(f"{where}: {student}: points {cell('points')!r} must be a number from 0 to {most:g} "
                            f"(the {'scenario' if scenario else 'assignment'}'s points; extra credit belongs in "
                            "the LMS)")
            continue
        if not comment:
            problems.append(f"{where}: {student}: no comment: say why (it is listed with the override)")
            continue
        key = (student, scenario)
        if key in seen:
            what = f"scenario {scenario}" if scenario else "the score"
            problems.append(f"{where}: {student}: {what} is overridden on line {seen[key]} already")
            continue
        seen[key] = line
        found.append(Override(student, round_points(points), comment, scenario, line))
    if problems:
        raise UsageError("\n".join(problems))
    return tuple(found)


def unknown_students(overrides: Iterable[Override], students: Iterable[str], source: str) -> list[str]:
    """One problem per override of a student who is not in the class (with "did you mean")."""
    known = set(students)
    return [f"{source}:{override.line}: {override.student_id} is not a student of this class"
            f"{did_you_mean(override.student_id, sorted(known))}"
            for override in overrides if override.student_id not in known]


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ".")) if text.count(",") == 1 and "." not in text else float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None
