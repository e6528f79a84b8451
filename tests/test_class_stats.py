"""The class statistics against values computed by hand on small tables (grader.class_stats)."""

from __future__ import annotations

import math

import pytest

from grader.class_stats import (
    Flag,
    class_statistics,
    cronbach_alpha,
    distribution,
    item_statistics,
    pearson,
)
from grader.results import Feedback, ScenarioResult, Status, SubmissionResult
from grader.scoring import CODE_OF, StudentRow
from grader.visibility import Scope, Visibility

# Five students, four items worth 1, 2, 1 and 1 points:
#        A  B  C  D   total
#   s1   1  2  1  0   4
#   s2   1  2  1  0   4
#   s3   1  0  1  1   3
#   s4   1  2  0  0   3
#   s5   1  0  0  1   2
TABLE = [[1, 2, 1, 0], [1, 2, 1, 0], [1, 0, 1, 1], [1, 2, 0, 0], [1, 0, 0, 1]]
POINTS = [1, 2, 1, 1]
IDS = ["A", "B", "C", "D"]


def test_distribution_by_hand():
    # totals 4 4 3 3 2: mean 16/5; squared deviations .64 .64 .04 .04 1.44 = 2.8, sample SD sqrt(2.8/4)
    d = distribution([4, 4, 3, 3, 2], 5)
    assert (d.n, d.mean, d.median, d.min, d.max) == (5, 3.2, 3, 2, 4)
    assert d.sd == pytest.approx(math.sqrt(0.7))
    assert (d.at_zero, d.at_full) == (0, 0)
    mixed = distribution([0, 5, 5, 2.5], 5)
    assert (mixed.at_zero, mixed.at_full, mixed.median) == (1, 2, 3.75)
    one = distribution([7], 10)
    assert one.sd is None and one.mean == 7
    assert distribution([], 10).mean is None


def test_item_statistics_by_hand():
    items = {item.id: item for item in item_statistics(TABLE, POINTS, IDS)}
    # A: everyone scored 1, no variance: it cannot tell students apart.
    assert items["A"].difficulty == 1.0 and items["A"].item_rest is None
    assert items["A"].flags == (Flag.TOO_EASY, Flag.NO_DISCRIMINATION)
    # B: mean 6/5 of 2 points. Rest (total - B) = 2 2 3 1 2, mean 2. Deviations: B .8 .8 -1.2 .8 -1.2,
    # rest 0 0 1 -1 0; cross products sum -2; sums of squares 4.8 and 2: r = -2 / sqrt(9.6).
    assert items["B"].difficulty == pytest.approx(0.6)
    assert items["B"].item_rest == pytest.approx(-2 / math.sqrt(9.6))
    assert items["B"].flags == (Flag.NEGATIVE_DISCRIMINATION,)
    # C: 1 1 1 0 0 against rest 3 3 2 3 2: cross products .2, sums of squares 1.2 and 1.2: r = 1/6.
    assert items["C"].difficulty == pytest.approx(0.6)
    assert items["C"].item_rest == pytest.approx(1 / 6)
    assert items["C"].flags == (Flag.NO_DISCRIMINATION,)
    # D: 0 0 1 0 1 against rest 4 4 2 3 1: cross products -2.6, sums of squares 1.2 and 6.8.
    assert items["D"].difficulty == pytest.approx(0.4)
    assert items["D"].item_rest == pytest.approx(-2.6 / math.sqrt(1.2 * 6.8))
    assert items["D"].flags == (Flag.NEGATIVE_DISCRIMINATION,)


def test_a_discriminating_item_has_no_flag():
    # X 1 1 0, Y 1 0 0: each item's rest is the other item; r = (1/3) / (6/9) = 0.5.
    items = item_statistics([[1, 1], [1, 0], [0, 0]], [1, 1], ["X", "Y"])
    assert [item.item_rest for item in items] == [pytest.approx(0.5), pytest.approx(0.5)]
    assert [item.difficulty for item in items] == [pytest.approx(2 / 3), pytest.approx(1 / 3)]
    assert all(item.flags == () for item in items)


def test_cronbach_alpha_by_hand():
    # X, Y above: item variances 2/9 each, totals 2 1 0 variance 2/3: alpha = 2 (1 - (4/9) / (2/3)) = 2/3.
    assert cronbach_alpha([[1, 1], [1, 0], [0, 0]]) == pytest.approx(2 / 3)
    # TABLE: item variances 0, .96, .24, .24 (sum 1.44); totals' variance 2.8 / 5 = .56:
    # alpha = 4/3 (1 - 1.44 / .56) = -44/21, negative: these items do not measure one thing.
    assert cronbach_alpha(TABLE) == pytest.approx(-44 / 21)
    # Perfectly consistent items: alpha 1.
    assert cronbach_alpha([[1, 1, 1], [0, 0, 0], [1, 1, 1]]) == pytest.approx(1.0)


def test_zero_variance_tables():
    everyone_full = [[1, 2], [1, 2], [1, 2]]
    items = item_statistics(everyone_full, [1, 2], ["P", "Q"])
    assert all(item.item_rest is None and item.difficulty == 1.0 for item in items)
    assert all(item.flags == (Flag.TOO_EASY, Flag.NO_DISCRIMINATION) for item in items)
    assert cronbach_alpha(everyone_full) is None        # the totals have no variance
    nobody = item_statistics([[0, 0], [0, 0]], [1, 1], ["P", "Q"])
    assert all(item.flags == (Flag.TOO_HARD, Flag.NO_DISCRIMINATION) for item in nobody)
    # One item varies, its rest (the other, constant) does not: no correlation either way.
    assert item_statistics([[1, 0], [0, 0]], [1, 1], ["P", "Q"])[0].item_rest is None
    assert cronbach_alpha([[1], [0]]) is None and cronbach_alpha([[1, 0]]) is None
    assert item_statistics([], [1], ["P"])[0].difficulty is None
    assert pearson([1, 1], [0, 1]) is None and pearson([1], [1]) is None


def _row(student: str, points: list[float], error: str | None = None) -> StudentRow:
    scenarios = tuple(
        ScenarioResult(item, item, "t1" if item in "AB" else "t2", earned, maximum,
                       Status.PASSED if earned == maximum else Status.FAILED, Feedback(), 0.01, Visibility.PUBLIC)
        for item, earned, maximum in zip(IDS, points, POINTS))
    result = SubmissionResult("a", "d", f"{student}.py", "x", 1, Scope.ALL, sum(points), 5, (), scenarios,
                              "0", ("rlimits",), error=error)
    return StudentRow.of(student, result, None)


def test_class_statistics_over_rows_ignores_ungradable_ones():
    rows = [_row(f"s{i}", points) for i, points in enumerate(TABLE, start=1)]
    rows.append(_row("broken", [0, 0, 0, 0], error="SyntaxError"))
    rows.append(StudentRow.of("missing", None, "no autodiff.py", 5))
    columns = rows[0].columns
    stats = class_statistics(rows, columns, dict(zip(IDS, POINTS)))
    assert stats["scores"]["n"] == 5 and stats["scores"]["mean"] == 3.2 and stats["scores"]["max_score"] == 5
    assert stats["alpha"] == round(-44 / 21, 6)
    assert [s["id"] for s in stats["scenarios"]] == IDS
    assert stats["scenarios"][1]["item_rest"] == round(-2 / math.sqrt(9.6), 6)
    assert stats["scenarios"][0]["flags"] == ["too easy", "no discrimination"]
    t1, t2 = stats["tasks"]
    # Task t1 (A, B): totals 3 3 1 3 1; item variances 0 and .96, totals' .96: alpha 2 (1 - 1) = 0.
    assert (t1["id"], t1["items"], t1["alpha"], t1["scores"]["max_score"]) == ("t1", 2, 0.0, 3)
    # Task t2 (C, D): totals 1 1 2 0 1, variance .4; item variances .24 and .24: alpha 2 (1 - .48/.4) = -0.4.
    assert t2["alpha"] == pytest.approx(-0.4)


def test_a_scenario_worth_no_points_counts_by_its_passes_and_stays_out_of_alpha():
    # E (no points) passed by s1, s2, s3 only: 1 1 1 0 0 against the whole totals 4 4 3 3 2.
    rows = [_row(f"s{i}", points) for i, points in enumerate(TABLE, start=1)]
    columns = rows[0].columns
    passes = [CODE_OF[Status.PASSED if i < 3 else Status.FAILED] for i in range(len(rows))]
    zero = [StudentRow(r.student_id, r.score, r.max_score, r.error, r.has_result, (*r.columns, _column("E")),
                       r.statuses + bytes([passed])) for r, passed in zip(rows, passes)]
    stats = class_statistics(zero, (*columns, _column("E")), {**dict(zip(IDS, POINTS)), "E": 0.0})
    e = stats["scenarios"][-1]
    assert e["difficulty"] == 0.6 and e["max_points"] == 0
    # deviations: E .4 .4 .4 -.6 -.6, totals .8 .8 -.2 -.2 -1.2: cross products 1.4; squares 1.2, 2.8.
    assert e["item_rest"] == round(1.4 / math.sqrt(1.2 * 2.8), 6)
    assert stats["alpha"] == round(-44 / 21, 6)          # as without E
    assert stats["scores"]["mean"] == 3.2


def _column(item: str):
    from grader.scoring import Column
    return Column(item, item, "t2")
