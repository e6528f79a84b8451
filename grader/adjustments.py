"""What an instructor changes of the grades the scenarios gave: overrides, a late penalty, a zero for
students who submitted nothing. Pure arithmetic over a class's rows; never applied to the stored
results (:mod:`grader.report.adjusted` applies it to the outputs made from them).

For each student, in this order:

1. each override of one scenario sets that scenario's points (the score moves by the difference);
2. an override of the score sets it;
3. the late penalty (``late_penalty`` percent) takes that share off a late submission's score, the
   overrides included: a policy of the course's, where an override corrects the grading.

The rows then carry the final score (``score``), the score before the penalty (``before_penalty``,
under a penalty policy) and what the overrides changed (``override``), for the gradebook; the class's
figures are made from the final scores.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from grader.lms_names import Identity
from grader.overrides import Override
from grader.records import record
from grader.scoring import StudentRow, round_points

NO_SUBMISSION = "no submission"      # the reason a roster student without a submission gets 0 (--missing zero)


@record
class Adjustments:
    """This run's adjustments (``grade --overrides --late-penalty --missing``)."""

    overrides: tuple[Override, ...] = ()
    late_penalty: float | None = None     # percent off a late submission's score; None: none
    missing_zero: bool = False            # roster students without a submission: 0, "no submission"
    overrides_file: str | None = None     # where the overrides were read (None: no --overrides)

    @property
    def given(self) -> bool:
        return self.overrides_file is not None or self.late_penalty is not None or self.missing_zero

    def to_dict(self) -> dict:
        """What ``OUT/adjustments.json`` records, for ``grader report`` to make its outputs alike."""
        return {"late_penalty": self.late_penalty, "missing": "zero" if self.missing_zero else "leave",
                "overrides_file": self.overrides_file,
                "overrides": [{"student_id": o.student_id, "scenario": o.scenario, "points": o.points,
                               "comment": o.comment, "line": o.line} for o in self.overrides]}

    @classmethod
    def from_dict(cls, document: dict) -> Adjustments:
        return cls(tuple(Override(str(o["student_id"]), float(o["points"]), str(o["comment"]),
                                  None if o.get("scenario") is None else str(o["scenario"]), int(o.get("line") or 0))
                         for o in document.get("overrides") or ()),
                   None if document.get("late_penalty") is None else float(document["late_penalty"]),
                   document.get("missing") == "zero", document.get("overrides_file"))


@record
class Changed:
    """An override as applied: whose, which scenario (None: the score), from what, to what, why."""

    student_id: str
    scenario: str | None
    before: float
    after: float
    comment: str


@record
class Penalised:
    """A late submission's penalty: its score before, the points taken off, the final score."""

    student_id: str
    before: float
    penalty: float
    after: float


@record
class Missing:
    """A student of the roster without a submission (``--missing zero``): 0 points in the LMS gradebooks."""

    key: str              # the roster's id of the student (Canvas's ID, Participant <id>, an email...)
    name: str
    identity: Identity    # as the LMS gradebooks place a student: the roster's system and id


@record
class Adjusted:
    """A class's rows as adjusted, and what was done to them."""

    rows: list[StudentRow]
    changed: tuple[Changed, ...]
    penalised: tuple[Penalised, ...]


@record
class Notes:
    """What the class's outputs list of the adjustments (the summary, the report): each override
    (``None``: no overrides file), each penalty, each student without a submission (``None``: no
    ``--missing zero``)."""

    late_penalty: float | None
    overrides: tuple[Changed, ...] | None
    penalised: tuple[Penalised, ...]
    missing: tuple[Missing, ...] | None

    @classmethod
    def of(cls, adjustments: Adjustments, adjusted: Adjusted, missing: tuple[Missing, ...]) -> Notes:
        return cls(adjustments.late_penalty, adjusted.changed if adjustments.overrides_file is not None else None,
                   adjusted.penalised, missing if adjustments.missing_zero else None)

    def to_dict(self) -> dict:
        """``summary.json``'s ``adjustments``: only what this run was asked for."""
        document: dict = {}
        if self.late_penalty is not None:
            document["late_penalty"] = {"percent": self.late_penalty, "penalised": [
                {"student_id": p.student_id, "score": p.before, "penalty": p.penalty, "final_score": p.after}
                for p in self.penalised]}
        if self.overrides is not None:
            document["overrides"] = [{"student_id": c.student_id, "scenario": c.scenario, "from": c.before,
                                      "to": c.after, "comment": c.comment} for c in self.overrides]
        if self.missing is not None:
            document["no_submission"] = [{"id": m.key, "name": m.name} for m in self.missing]
        return document


def adjust_rows(rows: Iterable[StudentRow], adjustments: Adjustments) -> Adjusted:
    """``rows`` with ``adjustments`` applied (see the module); rows in, rows out, in their order."""
    by_student: dict[str, list[Override]] = {}
    for override in adjustments.overrides:
        by_student.setdefault(override.student_id, []).append(override)
    out: list[StudentRow] = []
    changed: list[Changed] = []
    penalised: list[Penalised] = []
    for row in rows:
        row, done = _overridden(row, by_student.get(row.student_id, ()))
        changed += done
        if adjustments.late_penalty is not None:
            row, penalty = _penalised(row, adjustments.late_penalty)
            if penalty is not None:
                penalised.append(penalty)
        out.append(row)
    return Adjusted(out, tuple(changed), tuple(penalised))


def adjust_row(row: StudentRow, adjustments: Adjustments) -> StudentRow:
    """One student's row adjusted (for the student's own page)."""
    return adjust_rows([row], adjustments).rows[0]


def _overridden(row: StudentRow, overrides: Sequence[Override]) -> tuple[StudentRow, list[Changed]]:
    if not overrides:
        return row, []
    score = row.score
    points_set = dict(row.points_set)
    earned = row.points
    index = {column.id: at for at, column in enumerate(row.columns)}
    changed = []
    for override in sorted(overrides, key=lambda o: o.scenario is None):   # the scenarios', then the score's
        if override.scenario is None:
            changed.append(Changed(row.student_id, None, score, override.points, override.comment))
            score = override.points
            continue
        at = index.get(override.scenario)
        before = 0.0 if at is None or earned[at] != earned[at] else earned[at]   # NaN: it did not run
        score = round_points(score - before + override.points)
        if at is not None:
            points_set[at] = override.points
        changed.append(Changed(row.student_id, override.scenario, before, override.points, override.comment))
    said = "; ".join(f"{c.scenario or 'score'} {c.before:g} -> {c.after:g}: {c.comment}" for c in changed)
    return replace(row, score=round_points(score), points_set=tuple(sorted(points_set.items())), override=said), changed


def _penalised(row: StudentRow, percent: float) -> tuple[StudentRow, Penalised | None]:
    if not row.late:
        return replace(row, before_penalty=row.score), None
    penalty = round_points(row.score * percent / 100)
    after = round_points(row.score - penalty)
    return replace(row, score=after, before_penalty=row.score), Penalised(row.student_id, row.score, penalty, after)
