"""Class statistics over item scores: classical test theory, pure arithmetic over numbers.

An *item* is a scenario; a student's item score is the points earned on it (0 when it failed or
did not run). Only graded submissions count: an ungradable one says nothing about the items.

* **Distribution** of scores: n, mean, standard deviation (the sample's, n - 1), median, min,
  max, how many at 0 and at full marks.
* **Difficulty** of an item (Moodle's *facility index*): the mean item score as a fraction of its
  points; for a scenario, which earns all its points or none, the pass rate.
* **Corrected item-rest correlation** (Moodle's *discrimination index*): Pearson's correlation
  between the item score and the rest of the score (the total minus this item). Correlating with
  the total including the item, as PrairieLearn does, inflates it: the item correlates with
  itself. ``None`` when the item or the rest has no variance (everyone scored the same on it):
  such an item cannot tell students apart.
* **Cronbach's alpha** over a set of items: ``k/(k-1) * (1 - sum of item variances / variance
  of the totals)``, how consistently the items rank students (1: perfectly; near 0 or negative:
  the items measure different things, or little). Every item counts in ``k``, those with no
  variance too, as in the usual formula. ``None`` for fewer than two items or two students, or
  when the totals have no variance.

Flags (the thresholds are Moodle's quiz statistics' bands): too easy (difficulty at least
:data:`TOO_EASY`), too hard (at most :data:`TOO_HARD`), no discrimination (item-rest below
:data:`WEAK_DISCRIMINATION`, or none because the item or the rest has no variance), negative
discrimination (below 0: students who did better on the rest did worse on this item).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from enum import Enum

from grader.records import record
from grader.results import Status
from grader.scoring import CODE_OF, Column, StudentRow

TOO_EASY = 0.95              # Moodle: 95-100% "extremely easy"
TOO_HARD = 0.05              # Moodle: 5% or less "extremely difficult"
WEAK_DISCRIMINATION = 0.2    # Moodle: below 20% "very weak", probably not discriminating

_PASSED = CODE_OF[Status.PASSED]


class Flag(str, Enum):
    """Why an item deserves a look."""

    TOO_EASY = "too easy"
    TOO_HARD = "too hard"
    NO_DISCRIMINATION = "no discrimination"
    NEGATIVE_DISCRIMINATION = "negative discrimination"


@record
class Distribution:
    n: int
    mean: float | None
    sd: float | None           # the sample standard deviation (n - 1); None below two scores
    median: float | None
    min: float | None
    max: float | None
    at_zero: int
    at_full: int
    max_score: float

    def to_dict(self) -> dict:
        return {"n": self.n, "mean": _r(self.mean), "sd": _r(self.sd), "median": _r(self.median),
                "min": _r(self.min), "max": _r(self.max), "at_zero": self.at_zero, "at_full": self.at_full,
                "max_score": _r(self.max_score)}


@record
class ItemStats:
    id: str
    n: int
    max_points: float
    difficulty: float | None      # mean score / max points (the pass rate); None without students
    item_rest: float | None       # corrected item-rest correlation; None: no variance on one side
    flags: tuple[Flag, ...]

    def to_dict(self) -> dict:
        return {"id": self.id, "n": self.n, "max_points": _r(self.max_points), "difficulty": _r(self.difficulty),
                "item_rest": _r(self.item_rest), "flags": [flag.value for flag in self.flags]}


def distribution(scores: Sequence[float], max_score: float) -> Distribution:
    """The distribution of ``scores`` out of ``max_score``."""
    n = len(scores)
    if not n:
        return Distribution(0, None, None, None, None, None, 0, 0, max_score)
    return Distribution(n, statistics.fmean(scores), math.sqrt(_sum_of_squares(scores) / (n - 1)) if n > 1 else None,
                        statistics.median(scores), min(scores), max(scores),
                        sum(1 for s in scores if _close(s, 0.0)), sum(1 for s in scores if _close(s, max_score)),
                        max_score)


def item_statistics(matrix: Sequence[Sequence[float]], max_points: Sequence[float],
                    ids: Sequence[str]) -> list[ItemStats]:
    """Per item (column of ``matrix``, one row per student): difficulty, item-rest correlation, flags.
    An item of no points is no part of the total: its rest is the whole total, and its difficulty
    is its mean (its scores are 1 for a pass, 0 for a failure)."""
    counted = [j for j, points in enumerate(max_points) if points > 0]
    totals = [math.fsum(row[j] for j in counted) for row in matrix]
    items = []
    for j, (item_id, points) in enumerate(zip(ids, max_points)):
        column = [row[j] for row in matrix]
        difficulty = statistics.fmean(column) / (points if points > 0 else 1.0) if column else None
        rest = [total - score if points > 0 else total for total, score in zip(totals, column)]
        item_rest = pearson(column, rest)
        items.append(ItemStats(item_id, len(column), points, difficulty, item_rest, _flags(difficulty, item_rest)))
    return items


def cronbach_alpha(matrix: Sequence[Sequence[float]], items: Sequence[int] | None = None) -> float | None:
    """Cronbach's alpha of the items (columns) of ``matrix``, or of those of them whose indices
    ``items`` lists; see the module docstring."""
    if items is None:
        items = range(len(matrix[0])) if matrix else ()
    if len(matrix) < 2 or len(items) < 2:
        return None
    k = len(items)
    # Population variances throughout: alpha is a ratio of variances, the same with n or n - 1.
    n = len(matrix)
    total_variance = _sum_of_squares([math.fsum(row[j] for j in items) for row in matrix]) / n
    if total_variance <= 0:
        return None
    item_variances = math.fsum(_sum_of_squares([row[j] for row in matrix]) / n for j in items)
    return k / (k - 1) * (1 - item_variances / total_variance)


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's correlation of two equally long sequences; None when either has no variance."""
    n = len(x)
    if n < 2:
        return None
    mean_x, mean_y = statistics.fmean(x), statistics.fmean(y)
    dx = [value - mean_x for value in x]
    dy = [value - mean_y for value in y]
    sxx, syy = math.fsum(d * d for d in dx), math.fsum(d * d for d in dy)
    # A variance this small relative to the values is rounding, not spread: treat it as none.
    if sxx <= 1e-12 * max(1.0, mean_x * mean_x) * n or syy <= 1e-12 * max(1.0, mean_y * mean_y) * n:
        return None
    r = math.fsum(a * b for a, b in zip(dx, dy)) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def _sum_of_squares(values: Sequence[float]) -> float:
    """The sum of squared deviations from the mean (in floats: statistics.pvariance's exact
    fractions take seconds on a class of thousands)."""
    mean = math.fsum(values) / len(values)
    return math.fsum((value - mean) ** 2 for value in values)


def _flags(difficulty: float | None, item_rest: float | None) -> tuple[Flag, ...]:
    if difficulty is None:
        return ()
    flags = []
    if difficulty >= TOO_EASY:
        flags.append(Flag.TOO_EASY)
    elif difficulty <= TOO_HARD:
        flags.append(Flag.TOO_HARD)
    if item_rest is not None and item_rest < 0:
        flags.append(Flag.NEGATIVE_DISCRIMINATION)
    elif item_rest is None or item_rest < WEAK_DISCRIMINATION:
        flags.append(Flag.NO_DISCRIMINATION)
    return tuple(flags)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def _r(value: float | None) -> float | None:
    """Six decimals in JSON and tables: stable across runs, more than any reader needs."""
    return None if value is None else round(value, 6)


# --------------------------------------------------------------------------- a class's rows


def class_statistics(rows: Sequence[StudentRow], columns: Sequence[Column],
                     max_points: dict[str, float]) -> dict:
    """The statistics of ``summary.json``'s ``statistics`` key, over the graded rows, JSON-ready.

    ``scores``: the distribution of the total scores; ``alpha``: Cronbach's alpha over the
    scenarios that carry points; ``tasks``: per task (in the order of ``columns``) ``{id, items,
    alpha, scores}``; ``scenarios``: per scenario of ``columns``, in their order, ``{id, task, n,
    max_points, difficulty, item_rest, flags}``; ``thresholds``: the flags' thresholds.

    A scenario worth no points (a check that the provided code still works) counts as 1 when it
    passed and 0 when not: its difficulty is its pass rate and its item-rest correlation is with
    the whole score (of which it is no part); it stays out of alpha, which is about the score.
    """
    graded = [row for row in rows if row.graded]
    points = [max_points.get(column.id, 0.0) for column in columns]
    scored = [j for j, value in enumerate(points) if value > 0]
    layouts: dict[int, tuple[tuple[int | None, float], ...]] = {}
    matrix = [_ItemRow(row.statuses, _layout(row.columns, columns, points, layouts)) for row in graded]
    totals = [math.fsum(row[j] for j in scored) for row in matrix]
    items = item_statistics(matrix, points, [column.id for column in columns])
    tasks: dict[str, list[int]] = {}
    for j, column in enumerate(columns):
        tasks.setdefault(column.task, []).append(j)
    return {
        "scores": distribution(totals, math.fsum(points)).to_dict(),
        "alpha": _r(cronbach_alpha(matrix, scored)),
        "tasks": [{"id": task, "items": len(indices),
                   "alpha": _r(cronbach_alpha(matrix, [j for j in indices if points[j] > 0])),
                   "scores": distribution([math.fsum(row[j] for j in indices if points[j] > 0) for row in matrix],
                                          math.fsum(points[j] for j in indices)).to_dict()}
                  for task, indices in tasks.items()],
        "scenarios": [{**item.to_dict(), "task": column.task} for item, column in zip(items, columns)],
        "thresholds": {"too_easy": TOO_EASY, "too_hard": TOO_HARD, "weak_discrimination": WEAK_DISCRIMINATION},
    }


class _ItemRow(Sequence[float]):
    """A graded row's item scores in the order of the class's columns, read off its statuses when
    asked: its weight for a pass, 0 for anything else or a scenario it does not have. A row of the
    score matrix costs a few bytes, not a double per scenario: the report holds it beside every
    student's record."""

    __slots__ = ("codes", "layout")

    def __init__(self, codes: bytes, layout: tuple[tuple[int | None, float], ...]):
        self.codes, self.layout = codes, layout

    def __len__(self) -> int:
        return len(self.layout)

    def __getitem__(self, j):  # an index (all the statistics use), or a slice
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        place, weight = self.layout[j]
        return weight if place is not None and self.codes[place] == _PASSED else 0.0


def _layout(row_columns: tuple[Column, ...], columns: Sequence[Column], points: Sequence[float],
            seen: dict[int, tuple[tuple[int | None, float], ...]]
            ) -> tuple[tuple[int | None, float], ...]:
    """For each of ``columns``: where it is in a row of ``row_columns`` (None: not there) and what a
    pass earns there (the row's points; 1 for a scenario worth no ``points``). One per distinct
    scenario list, kept in ``seen`` by the list's identity."""
    key = id(row_columns)  # rows share one tuple per list (scoring._columns), alive while they are
    if key not in seen:
        place = {column.id: (at, column.points) for at, column in enumerate(row_columns)}
        seen[key] = tuple((place[column.id][0], place[column.id][1] if worth > 0 else 1.0)
                          if column.id in place else (None, 0.0)
                          for column, worth in zip(columns, points))
    return seen[key]
