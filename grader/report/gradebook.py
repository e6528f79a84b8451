"""The gradebook (``gradebook.csv``) and the printed class summary: renderings of a batch's data.

Pure functions over :class:`~grader.scoring.StudentRow` objects (one per student) and the
:class:`~grader.summary.ClassSummary` made of them.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING

from grader.report.text import points
from grader.scoring import Column, StudentRow, scenario_order

if TYPE_CHECKING:
    from grader.summary import ClassSummary

BAR_WIDTH = 30
IGNORED_SHOWN = 20   # ignored files printed; summary.json lists them all
# A spreadsheet runs a cell starting with one of these as a formula (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def gradebook_rows(rows: Iterable[StudentRow], columns: tuple[Column, ...] | None = None, *,
                   late_penalty: bool = False, overrides: bool = False) -> tuple[list[str], list[list[str]]]:
    """The gradebook as ``(header, rows)``, one row per student, sorted by student id.

    CSV columns (``OUT/gradebook.csv``):

    - ``student_id``: as derived from the submission's name; a value starting with ``=``, ``+``,
      ``-``, ``@``, a tab or a carriage return gets a leading ``'`` so spreadsheets do not run it
      as a formula.
    - ``score``: points earned; ``0`` when the submission could not be graded (it failed to
      import, it was not found, it was refused), never empty.
    - ``max_score``: the points available, on every row.
    - ``status``: ``graded``, or ``error: <why it could not be graded>``.
    - ``late``: ``yes`` when the LMS marked the submission late (Canvas's download names say so),
      else empty (Moodle's and plain names do not say).
    - ``provided_changes``: the parts of the provided engine the submission changed
      (``Tensor.backward; GradientTape.watch (removed)``), empty when none.
    - then one column per scenario id, in the assignment's order: the points earned on that
      scenario, or ``pass``/``fail`` for a scenario worth 0 points (the provided engine's);
      empty when the scenario did not run.

    With a late penalty (``late_penalty``), ``score`` is the score before it, and after ``late``
    come ``late_penalty`` (the points taken off a late submission, empty for one on time) and
    ``final_score``; with overrides (``overrides``), an ``override`` column says what they changed
    (``score 40 -> 55: regrade request``), the scores and scenario cells being the overridden ones.
    """
    header, lines = iter_gradebook(rows, columns, late_penalty=late_penalty, overrides=overrides)
    return header, list(lines)


def iter_gradebook(rows: Iterable[StudentRow], columns: tuple[Column, ...] | None = None, *,
                   late_penalty: bool = False, overrides: bool = False) -> tuple[list[str], Iterator[list[str]]]:
    """Like :func:`gradebook_rows`, with the lines made one at a time (a class of any size).
    ``columns``: the assignment's scenarios (default: those of the results)."""
    rows = sorted(rows, key=lambda row: row.student_id)
    scenario_ids = [column.id for column in (columns if columns is not None else scenario_order(rows))]
    max_score = next((row.max_score for row in rows if row.max_score is not None), None)
    adjusted = [*(["late_penalty", "final_score"] if late_penalty else []), *(["override"] if overrides else [])]
    header = ["student_id", "score", "max_score", "status", "late", *adjusted, "provided_changes", *scenario_ids]

    def adjustments(row: StudentRow) -> list[str]:
        cells = []
        if late_penalty:
            before = row.score if row.before_penalty is None else row.before_penalty
            cells += [_number(round(before - row.score, 6)) if row.late else "", _number(row.score)]
        return cells + ([_guard(row.override)] if overrides else [])

    def score(row: StudentRow) -> str:
        return _number(row.before_penalty if late_penalty and row.before_penalty is not None else row.score)

    def lines() -> Iterator[list[str]]:
        for row in rows:
            if not row.has_result:
                yield [_guard(row.student_id), score(row), _number(row.max_score or max_score),
                       _guard(f"error: {row.error}"), _late(row), *adjustments(row), "", *[""] * len(scenario_ids)]
                continue
            earned = {column.id: _cell(column, value, passed)
                      for column, value, passed in zip(row.columns, row.points, row.passed)}
            status = "graded" if row.error is None else f"error: {row.error}"
            yield [_guard(row.student_id), score(row), _number(row.max_score), _guard(status), _late(row),
                   *adjustments(row), _guard(row.provided_changes), *[earned.get(i, "") for i in scenario_ids]]

    return header, lines()


def write_csv(rows: Iterable[StudentRow], stream: IO[str], columns: tuple[Column, ...] | None = None, *,
              late_penalty: bool = False, overrides: bool = False) -> None:
    """Write the gradebook as CSV to ``stream``, a line at a time (open files with ``newline=""``)."""
    header, lines = iter_gradebook(rows, columns, late_penalty=late_penalty, overrides=overrides)
    writer = csv.writer(stream)
    writer.writerow(header)
    writer.writerows(lines)


def render_summary(summary: ClassSummary, late_by: str = "by the LMS") -> str:
    """The summary as text for the terminal: counts, statistics, a histogram bar per bin, pass rates;
    ``late_by``: what marked the late ones."""
    out = [f"{summary.graded} of {summary.count} submissions graded"
           + (f", {len(summary.ungradable)} could not be graded" if summary.ungradable else "")]
    if summary.graded:
        out.append(f"Score: mean {_one_decimal(summary.mean or 0.0)}, median {_one_decimal(summary.median or 0.0)}, "
                   f"min {points(summary.min or 0.0)}, max {points(summary.max or 0.0)} "
                   f"(out of {points(summary.max_score or 0.0)})")
        out += ["", "Scores:"]
        peak = max(b.count for b in summary.histogram)
        for b in summary.histogram:
            bar = "#" * math.ceil(BAR_WIDTH * b.count / peak) if b.count else ""
            out.append(f"  {points(b.low):>6} - {points(b.high):<6} {bar:<{BAR_WIDTH}} {b.count}")
    if summary.scenarios:
        out += ["", "Scenario pass rates (lowest first):"]
        for s in summary.scenarios:
            rate = "   -" if s.rate is None else f"{s.rate:4.0%}"
            out.append(f"  {rate} {s.passed:>4}/{s.total:<4} {s.id}: {s.title}")
    late = summary.late
    if late:
        out += ["", f"Marked late {late_by} ({len(late)}): " + ", ".join(late[:IGNORED_SHOWN])
                + (f" and {len(late) - IGNORED_SHOWN} more" if len(late) > IGNORED_SHOWN else "")]
    if summary.ungradable:
        out += ["", "Could not be graded (0 points each):"]
        out += [f"  {u.student_id}: {u.reason}" for u in summary.ungradable]
    out += _adjustments(summary.adjustments or {})
    ignored = summary.batch.ignored if summary.batch is not None else ()
    if ignored:
        out += ["", f"Ignored ({len(ignored)}, all listed in summary.json):"]
        out += [f"  {i.path}: {i.why}" for i in ignored[:IGNORED_SHOWN]]
        if len(ignored) > IGNORED_SHOWN:
            out.append(f"  ... and {len(ignored) - IGNORED_SHOWN} more")
    return "\n".join(out) + "\n"


def _adjustments(adjustments: dict) -> list[str]:
    """The lines of what overrides, a late penalty and --missing zero did (summary.json's ``adjustments``)."""
    out = []
    penalty = adjustments.get("late_penalty")
    if penalty is not None:
        out += ["", f"Late penalty, {points(penalty['percent'])}% off ({len(penalty['penalised'])}):"]
        out += [f"  {p['student_id']}: {points(p['score'])} - {points(p['penalty'])} = {points(p['final_score'])}"
                for p in penalty["penalised"]]
    if "overrides" in adjustments:
        out += ["", f"Overrides ({len(adjustments['overrides'])}):"]
        out += [f"  {o['student_id']}: {o['scenario'] or 'score'} {points(o['from'])} -> {points(o['to'])}: "
                f"{o['comment']}" for o in adjustments["overrides"]]
    if "no_submission" in adjustments:
        missing = adjustments["no_submission"]
        out += ["", f"No submission, 0 in the LMS gradebooks ({len(missing)}): "
                + ", ".join(f"{m['name']} ({m['id']})" for m in missing[:IGNORED_SHOWN])
                + (f" and {len(missing) - IGNORED_SHOWN} more" if len(missing) > IGNORED_SHOWN else "")]
    return out


def _late(row: StudentRow) -> str:
    return "yes" if row.late else ""


def _one_decimal(value: float) -> str:
    """A mean or a median for a person to read: 62.3, 70 (not 62.333333)."""
    return f"{value:.1f}".removesuffix(".0")


def _cell(column: Column, earned: float, passed: int) -> str:
    """A scenario's cell: its points, or for a 0-point scenario whether it passed; empty: not run."""
    if math.isnan(earned):
        return ""
    if column.points == 0:
        return "pass" if passed else "fail"
    return _number(earned)


def spreadsheet_safe(text: str) -> str:
    """``text`` with a leading ``'`` when a spreadsheet would run it as a formula."""
    return "'" + text if text.startswith(_FORMULA_START) else text


_guard = spreadsheet_safe


def _number(value: float | None) -> str:
    return "" if value is None else points(value)

