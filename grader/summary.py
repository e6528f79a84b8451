"""The summary of a class (``OUT/summary.json``, and what ``grader grade`` prints): a typed record
made from the students' rows, pure arithmetic; :meth:`ClassSummary.to_dict` is the file's document.

:func:`summarize` gives the statistics of any rows; :func:`class_summary` is the one place a
batch's summary is composed (the statistics over the manifest's columns, then what the batch was),
so that a merged summary and a batch's own come out byte for byte the same.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, replace

from grader.class_stats import class_statistics
from grader.manifest import Manifest
from grader.scoring import Column, StudentRow, round_points, scenario_order

BINS = 10


@dataclass(frozen=True, slots=True)
class Ungradable:
    student_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Bin:
    """A histogram bin: the scores from ``low`` up to ``high`` (the last bin includes ``high``)."""

    low: float
    high: float
    count: int


@dataclass(frozen=True, slots=True)
class PassRate:
    """A scenario's pass rate over the graded submissions (None: nobody could be graded on it)."""

    id: str
    title: str
    task: str
    passed: int
    total: int
    rate: float | None


@dataclass(frozen=True, slots=True)
class Ignored:
    path: str           # inside SUBMISSIONS
    why: str


@dataclass(frozen=True, slots=True)
class Batch:
    """What a batch was: its assignment, the seed and the grader version of every result."""

    assignment: str
    title: str
    assignment_digest: str
    seed: int
    grader_version: str
    complete: bool                 # False: an interrupted batch (its summary is not written)
    ignored: tuple[Ignored, ...]   # files of SUBMISSIONS not graded, by rule


@dataclass(frozen=True, slots=True)
class ClassSummary:
    """The statistics of a class's graded submissions; ``statistics`` and ``batch`` are there for a
    batch's summary (:func:`class_summary`)."""

    count: int
    graded: int                          # with a result and no error
    ungradable: tuple[Ungradable, ...]
    max_score: float | None              # the assignment's, when given, else the results'
    mean: float | None                   # over the graded scores; None when nothing was graded
    median: float | None
    min: float | None
    max: float | None
    histogram: tuple[Bin, ...]           # BINS bins over 0..max_score
    scenarios: tuple[PassRate, ...]      # lowest rate first (what the class got wrong), ties in assignment order
    late: tuple[str, ...]                # the students whose submission the LMS marked late
    statistics: dict | None = None       # grader.class_stats.class_statistics, JSON-ready
    batch: Batch | None = None
    adjustments: dict | None = None      # grader.adjustments.Notes.to_dict: overrides, penalties, no submission

    def to_dict(self) -> dict:
        """The JSON document of ``summary.json`` (its keys, in this order, are the file's contract)."""
        document: dict = {
            "count": self.count, "graded": self.graded,
            "ungradable": [{"student_id": u.student_id, "reason": u.reason} for u in self.ungradable],
            "max_score": self.max_score, "mean": self.mean, "median": self.median, "min": self.min,
            "max": self.max,
            "histogram": [{"from": b.low, "to": b.high, "count": b.count} for b in self.histogram],
            "scenarios": [{"id": s.id, "title": s.title, "task": s.task, "passed": s.passed, "total": s.total,
                           "rate": s.rate} for s in self.scenarios],
            "late": list(self.late),
        }
        if self.statistics is not None:
            document["statistics"] = self.statistics
        if self.batch is not None:
            b = self.batch
            document.update(assignment=b.assignment, title=b.title, assignment_digest=b.assignment_digest,
                            seed=b.seed, grader_version=b.grader_version, complete=b.complete,
                            ignored=[{"path": i.path, "why": i.why} for i in b.ignored])
        if self.adjustments is not None:
            document["adjustments"] = self.adjustments
        return document


def summarize(rows: Iterable[StudentRow], *, max_score: float | None = None,
              columns: tuple[Column, ...] | None = None) -> ClassSummary:
    """The statistics of ``rows``; the pass rates are per scenario of ``columns`` when given, else
    of the results (see :func:`grader.scoring.scenario_order`)."""
    rows = sorted(rows, key=lambda row: row.student_id)
    graded = [row for row in rows if row.graded]
    scores = [row.score for row in graded]
    if max_score is None:
        max_score = next((row.max_score for row in rows if row.max_score is not None), None)
    return ClassSummary(
        count=len(rows), graded=len(graded),
        ungradable=tuple(Ungradable(row.student_id, row.error or "") for row in rows if not row.graded),
        max_score=max_score,
        mean=round_points(statistics.fmean(scores)) if scores else None,
        median=round_points(statistics.median(scores)) if scores else None,
        min=min(scores) if scores else None, max=max(scores) if scores else None,
        histogram=_histogram(scores, max_score or 0.0),
        scenarios=_pass_rates(list(columns) if columns is not None else scenario_order(rows), graded),
        late=tuple(row.student_id for row in rows if row.late))


def class_summary(manifest: Manifest, rows: list[StudentRow], *, complete: bool = True) -> ClassSummary:
    """A batch's summary: the statistics of ``rows`` over the manifest's columns, the item
    statistics, then what the batch was (assignment, digest, seed, grader version), whether it is
    complete, the ignored files."""
    summary = summarize(rows, max_score=manifest.max_score, columns=manifest.columns)
    stats = class_statistics(rows, manifest.columns, {c.id: c.points for c in manifest.columns})
    batch = Batch(manifest.assignment, manifest.title, manifest.assignment_digest, manifest.seed,
                  manifest.grader_version, complete, tuple(Ignored(path, why) for path, why in manifest.ignored))
    return replace(summary, statistics=stats, batch=batch)


def _pass_rates(columns: list[Column], graded: list[StudentRow]) -> tuple[PassRate, ...]:
    passed = dict.fromkeys((column.id for column in columns), 0)
    total = dict.fromkeys((column.id for column in columns), 0)
    for row in graded:
        for column, did in zip(row.columns, row.passed):
            if column.id not in total:
                continue
            total[column.id] += 1
            passed[column.id] += did
    rates = [PassRate(column.id, column.title, column.task, passed[column.id], total[column.id],
                      round_points(passed[column.id] / total[column.id]) if total[column.id] else None)
             for column in columns]
    # Scenarios nobody could be graded on carry no information: they go last.
    return tuple(sorted(rates, key=lambda r: (r.rate is None, r.rate or 0.0)))


def _histogram(scores: list[float], max_score: float) -> tuple[Bin, ...]:
    width = max_score / BINS
    counts = [0] * BINS
    for score in scores:
        # The epsilon keeps 0.3/0.1 == 3 from landing in bin 2; the last bin holds full marks.
        index = math.floor(score / width + 1e-9) if width > 0 else BINS - 1
        counts[min(max(index, 0), BINS - 1)] += 1
    return tuple(Bin(round_points(i * width), round_points((i + 1) * width), count) for i, count in enumerate(counts))
