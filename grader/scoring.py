"""Scores from scenario results: pure arithmetic over data."""

from __future__ import annotations

from grader.results import ScenarioResult, TaskScore
from grader.spec import Assignment


def task_scores(assignment: Assignment, scenarios: tuple[ScenarioResult, ...]) -> tuple[TaskScore, ...]:
    """Points per task, in the spec's task order, for the tasks that had scenarios in this run."""
    scores = []
    for task in assignment.tasks:
        mine = [s for s in scenarios if s.task == task.id]
        if mine:
            scores.append(TaskScore(task.id, task.title, _round(sum(s.points for s in mine)),
                                    _round(sum(s.max_points for s in mine))))
    return tuple(scores)


def total(scenarios: tuple[ScenarioResult, ...]) -> tuple[float, float]:
    """(score, max score)."""
    return _round(sum(s.points for s in scenarios)), _round(sum(s.max_points for s in scenarios))


def _round(value: float) -> float:
    # Points are decimal fractions at most; keep 1/3-style sums readable and stable across runs.
    return round(value, 6)
