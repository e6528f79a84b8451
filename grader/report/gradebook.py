"""The batch outputs over many submissions: ``gradebook.csv``, ``summary.json`` and the printed summary.

Pure functions over :class:`Row` objects: one per student, a few hundred bytes whatever the feedback
(made with :meth:`Row.of` from ``(student_id, result, error_message)``, where ``result`` is a
:class:`~grader.results.SubmissionResult`, or ``None`` when the batch could not produce one and
``error_message`` says why). A batch keeps only rows in memory, so its memory stays flat in the
number of submissions.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from array import array
from dataclasses import dataclass
from typing import IO, Iterable, Iterator

from grader.report.text import points
from grader.results import Status, SubmissionResult

BINS = 10
BAR_WIDTH = 30
IGNORED_SHOWN = 20   # ignored files printed; summary.json lists them all
# A spreadsheet runs a cell starting with one of these as a formula (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NOT_RUN = float("nan")


@dataclass(frozen=True)
class Column:
    """A scenario as a gradebook column: shared by every row (strings interned)."""

    id: str
    title: str
    task: str


@dataclass(frozen=True, slots=True)
class Row:
    """One student's line: scores and per-scenario points, no feedback."""

    student_id: str
    score: float | None           # None: no result at all
    max_score: float | None
    error: str | None             # why it could not be graded (first line), or None
    columns: tuple[Column, ...]   # the scenarios this result had, in its order (shared tuple)
    points: array                 # array('d') aligned with columns; NaN: not run
    passed: bytes                 # aligned with columns; 1: passed

    @classmethod
    def of(cls, student_id: str, result: SubmissionResult | None, error: str | None) -> "Row":
        if result is None:
            return cls(sys.intern(student_id), None, None, error or "not graded", (), array("d"), b"")
        columns = _columns(tuple((s.id, s.title, s.task) for s in result.scenarios))
        earned = array("d", (_NOT_RUN if s.status is Status.NOT_RUN else s.points for s in result.scenarios))
        passed = bytes(s.passed for s in result.scenarios)
        reason = result.error.splitlines()[0] if result.error else None
        return cls(sys.intern(student_id), result.score, result.max_score, reason, columns, earned, passed)

    @property
    def graded(self) -> bool:
        return self.score is not None and self.error is None


_COLUMN_SETS: dict[tuple, tuple[Column, ...]] = {}


def _columns(key: tuple) -> tuple[Column, ...]:
    """One shared tuple of columns per distinct scenario list (every row of a batch shares it)."""
    if key not in _COLUMN_SETS:
        _COLUMN_SETS[key] = tuple(Column(*(sys.intern(text) for text in item)) for item in key)
    return _COLUMN_SETS[key]


def gradebook_rows(rows: Iterable[Row]) -> tuple[list[str], list[list[str]]]:
    """The gradebook as ``(header, rows)``, one row per student, sorted by student id.

    CSV columns (``OUT/gradebook.csv``):

    - ``student_id``: as derived from the submission's name; a value starting with ``=``, ``+``,
      ``-``, ``@``, a tab or a carriage return gets a leading ``'`` so spreadsheets do not run it
      as a formula.
    - ``score``: points earned (``0`` when the submission could not be graded, e.g. it failed
      to import); empty when no result exists for it at all.
    - ``max_score``: the points available.
    - ``status``: ``graded``, or ``error: <why it could not be graded>``.
    - then one column per scenario id, in the assignment's order: the points earned on that
      scenario; empty when the scenario did not run.
    """
    header, lines = iter_gradebook(rows)
    return header, list(lines)


def iter_gradebook(rows: Iterable[Row]) -> tuple[list[str], Iterator[list[str]]]:
    """Like :func:`gradebook_rows`, with the lines made one at a time (a class of any size)."""
    rows = sorted(rows, key=lambda row: row.student_id)
    scenario_ids = [column.id for column in _scenario_order(rows)]
    max_score = next((row.max_score for row in rows if row.max_score is not None), None)
    header = ["student_id", "score", "max_score", "status", *scenario_ids]

    def lines() -> Iterator[list[str]]:
        for row in rows:
            if row.score is None:
                yield [_guard(row.student_id), "", _number(max_score), _guard(f"error: {row.error}"),
                       *[""] * len(scenario_ids)]
                continue
            earned = {column.id: "" if math.isnan(value) else _number(value)
                      for column, value in zip(row.columns, row.points)}
            status = "graded" if row.error is None else f"error: {row.error}"
            yield [_guard(row.student_id), _number(row.score), _number(row.max_score), _guard(status),
                   *[earned.get(i, "") for i in scenario_ids]]

    return header, lines()


def write_csv(rows: Iterable[Row], stream: IO[str]) -> None:
    """Write the gradebook as CSV to ``stream``, a line at a time (open files with ``newline=""``)."""
    header, lines = iter_gradebook(rows)
    writer = csv.writer(stream)
    writer.writerow(header)
    writer.writerows(lines)


def summarize(rows: Iterable[Row]) -> dict:
    """The class summary (``OUT/summary.json``): plain data, JSON-ready.

    Keys: ``count``; ``graded`` (how many have a result without error); ``ungradable`` (list of
    ``{student_id, reason}``); ``max_score``; ``mean``, ``median``, ``min``, ``max`` over the graded
    scores (``None`` when nothing was graded); ``histogram``: ``BINS`` bins over ``0..max_score``
    as ``{from, to, count}`` (the last bin includes ``max_score``); ``scenarios``: per scenario
    ``{id, title, task, passed, total, rate}`` over the graded submissions, lowest rate first
    (what the class got wrong), ties in assignment order.
    """
    rows = sorted(rows, key=lambda row: row.student_id)
    graded = [row for row in rows if row.graded]
    ungradable = [{"student_id": row.student_id, "reason": row.error} for row in rows if not row.graded]
    scores = [row.score for row in graded]
    max_score = next((row.max_score for row in rows if row.max_score is not None), None)
    return {
        "count": len(rows),
        "graded": len(graded),
        "ungradable": ungradable,
        "max_score": max_score,
        "mean": _round(statistics.fmean(scores)) if scores else None,
        "median": _round(statistics.median(scores)) if scores else None,
        "min": min(scores) if scores else None,
        "max": max(scores) if scores else None,
        "histogram": _histogram(scores, max_score or 0.0),
        "scenarios": _pass_rates(rows, graded),
    }


def render_summary(summary: dict) -> str:
    """The summary as text for the terminal: counts, statistics, a histogram bar per bin, pass rates."""
    out = [f"{summary['graded']} of {summary['count']} submissions graded"
           + (f", {len(summary['ungradable'])} could not be graded" if summary["ungradable"] else "")]
    if summary["graded"]:
        out.append(f"Score: mean {points(summary['mean'])}, median {points(summary['median'])}, "
                   f"min {points(summary['min'])}, max {points(summary['max'])} "
                   f"(out of {points(summary['max_score'])})")
        out += ["", "Scores:"]
        peak = max(b["count"] for b in summary["histogram"])
        for b in summary["histogram"]:
            bar = "#" * math.ceil(BAR_WIDTH * b["count"] / peak) if b["count"] else ""
            out.append(f"  {points(b['from']):>6} - {points(b['to']):<6} {bar:<{BAR_WIDTH}} {b['count']}")
    if summary["scenarios"]:
        out += ["", "Scenario pass rates (lowest first):"]
        for s in summary["scenarios"]:
            rate = "   -" if s["rate"] is None else f"{s['rate']:4.0%}"
            out.append(f"  {rate} {s['passed']:>4}/{s['total']:<4} {s['id']}: {s['title']}")
    if summary["ungradable"]:
        out += ["", "Could not be graded:"]
        out += [f"  {u['student_id']}: {u['reason']}" for u in summary["ungradable"]]
    ignored = summary.get("ignored") or []
    if ignored:
        out += ["", f"Ignored ({len(ignored)}, all listed in summary.json):"]
        out += [f"  {i['path']}: {i['why']}" for i in ignored[:IGNORED_SHOWN]]
        if len(ignored) > IGNORED_SHOWN:
            out.append(f"  ... and {len(ignored) - IGNORED_SHOWN} more")
    return "\n".join(out) + "\n"


def _scenario_order(rows: list[Row]) -> list[Column]:
    """Scenarios in assignment order: the first error-free result's, then any others' new ones."""
    order: dict[str, Column] = {}
    for row in sorted((row for row in rows if row.score is not None), key=lambda row: row.error is not None):
        for column in row.columns:
            order.setdefault(column.id, column)
    return list(order.values())


def _pass_rates(rows: list[Row], graded: list[Row]) -> list[dict]:
    rates = {column.id: {"id": column.id, "title": column.title, "task": column.task, "passed": 0, "total": 0,
                         "rate": None} for column in _scenario_order(rows)}
    for row in graded:
        for column, passed in zip(row.columns, row.passed):
            rates[column.id]["total"] += 1
            rates[column.id]["passed"] += passed
    for rate in rates.values():
        rate["rate"] = _round(rate["passed"] / rate["total"]) if rate["total"] else None
    # Scenarios nobody could be graded on carry no information: they go last.
    return sorted(rates.values(), key=lambda r: (r["rate"] is None, r["rate"] or 0.0))


def _histogram(scores: list[float], max_score: float) -> list[dict]:
    width = max_score / BINS
    bins = [{"from": _round(i * width), "to": _round((i + 1) * width), "count": 0} for i in range(BINS)]
    for score in scores:
        # The epsilon keeps 0.3/0.1 == 3 from landing in bin 2; the last bin holds full marks.
        index = math.floor(score / width + 1e-9) if width > 0 else BINS - 1
        bins[min(max(index, 0), BINS - 1)]["count"] += 1
    return bins


def _guard(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _number(value: float | None) -> str:
    return "" if value is None else points(value)


def _round(value: float) -> float:
    return round(value, 6)
