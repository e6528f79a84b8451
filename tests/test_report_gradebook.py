"""The gradebook CSV and the class summary, over real results of the mini assignment."""

import csv
import io
import json
from pathlib import Path

import pytest

import grader
from grader.report.gradebook import gradebook_rows, render_summary, write_csv
from grader.scoring import StudentRow as Row
from grader.summary import Bin, PassRate, Ungradable, summarize

MINI = Path(__file__).parent / "fixtures" / "mini"
HEADER = ["student_id", "score", "max_score", "status", "late", "provided_changes", "square_values", "grad_values",
          "fresh_state"]


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    """Graded once: a correct, a wrong-square, a wrong-everything and an unimportable submission."""
    assignment = grader.load_assignment(MINI)
    folder = tmp_path_factory.mktemp("submissions")
    source = (MINI / "squares.py").read_text()
    variants = {"dan": source.replace("** 2", "* 2"),                          # square wrong: 4/6
                "=cmd|' /C calc'!A0": source.replace("** 2", "* 2").replace("2 * np", "3 * np"),  # 1/6
                "erin": "import nonexistent_module_xyz\n"}                      # cannot import
    results = {"amy": grader.grade_submission(MINI / "squares.py", assignment, seed=1)}
    for student, text in variants.items():
        (folder / "squares.py").write_text(text)
        results[student] = grader.grade_submission(folder / "squares.py", assignment, seed=1)
    unsorted = [(s, r, None) for s, r in results.items()]
    entries = unsorted + [("bob", None, "two submissions for student id bob"), ("@ann", None, None)]
    late = {"dan", "bob"}   # as a Canvas download's _LATE_ names mark them
    return [Row.of(*entry, late=entry[0] in late) for entry in entries]


def test_rows(entries):
    header, rows = gradebook_rows(entries)
    assert header == HEADER
    by_id = {row[0]: row for row in rows}
    assert [row[0] for row in rows] == sorted(by_id)  # sorted by student id (the raw id)
    assert by_id["amy"] == ["amy", "6", "6", "graded", "", "", "2", "3", "1"]
    assert by_id["dan"] == ["dan", "4", "6", "graded", "yes", "", "0", "3", "1"]
    assert by_id["'=cmd|' /C calc'!A0"][1:] == ["1", "6", "graded", "", "", "0", "0", "1"]
    # The error-row convention: 0 of the maximum, never an empty score (an LMS reads that as "no change").
    assert by_id["bob"] == ["bob", "0", "6", "error: two submissions for student id bob", "yes", "", "", "", ""]
    assert by_id["'@ann"] == ["'@ann", "0", "6", "error: not graded", "", "", "", "", ""]
    erin = by_id["erin"]
    assert erin[1:3] == ["0", "6"] and erin[3].startswith("error: ") and erin[4:] == ["", "", "", "", ""]


def test_csv_round_trip(entries):
    stream = io.StringIO(newline="")
    write_csv(entries, stream)
    parsed = list(csv.reader(io.StringIO(stream.getvalue(), newline="")))
    assert parsed == [HEADER, *gradebook_rows(entries)[1]]
    assert not any(cell.startswith(("=", "+", "-", "@")) for row in parsed for cell in row)


def test_no_entries():
    assert gradebook_rows([]) == (["student_id", "score", "max_score", "status", "late", "provided_changes"], [])
    summary = summarize([])
    assert summary.count == 0 and summary.mean is None and summary.scenarios == ()
    assert "0 of 0" in render_summary(summary)


def test_summary(entries):
    summary = summarize(entries)
    document = summary.to_dict()
    json.dumps(document, allow_nan=False)  # JSON-ready
    assert list(document) == ["count", "graded", "ungradable", "max_score", "mean", "median", "min", "max",
                              "histogram", "scenarios", "late"]
    assert (summary.count, summary.graded, summary.max_score) == (6, 3, 6)
    assert {u.student_id for u in summary.ungradable} == {"bob", "@ann", "erin"}
    assert Ungradable("bob", "two submissions for student id bob") in summary.ungradable
    assert {"student_id": "bob", "reason": "two submissions for student id bob"} in document["ungradable"]
    assert (summary.min, summary.median, summary.max) == (1, 4, 6)
    assert summary.mean == pytest.approx(11 / 3)
    assert summary.late == ("bob", "dan")
    assert "Marked late by the LMS (2): bob, dan" in render_summary(summary)
    histogram = summary.histogram
    assert len(histogram) == 10 and histogram[0].low == 0 and histogram[-1].high == 6
    assert [b.count for b in histogram] == [0, 1, 0, 0, 0, 0, 1, 0, 0, 1]  # 1 -> [0.6, 1.2), 6 -> last
    assert document["histogram"][1] == {"from": 0.6, "to": 1.2, "count": 1} and histogram[1] == Bin(0.6, 1.2, 1)
    rates = [(s.id, s.passed, s.total) for s in summary.scenarios]
    assert rates == [("square_values", 1, 3), ("grad_values", 2, 3), ("fresh_state", 3, 3)]
    assert summary.scenarios[0].rate == pytest.approx(1 / 3)
    assert summary.scenarios[0] == PassRate("square_values", "square(x) on random x", "values", 1, 3,
                                            summary.scenarios[0].rate)


def test_render_summary(entries):
    text = render_summary(summarize(entries))
    assert "3 of 6 submissions graded, 3 could not be graded" in text
    assert "mean 3.7, median 4, min 1, max 6 (out of 6)" in text
    bars = [line for line in text.splitlines() if line.rstrip().endswith(" 1") and "#" in line]
    assert len(bars) == 3
    assert text.index("square_values") < text.index("grad_values") < text.index("fresh_state")
    assert "  33%    1/3    square_values: square(x) on random x" in text
    assert "bob: two submissions for student id bob" in text
