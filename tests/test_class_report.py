"""The class report's pure core on classes made by hand: grader.class_data (the class and its
views), grader.report.class_html and svg (the page), grader.report.student_html (a student's page)."""

from __future__ import annotations

import re

from grader.class_data import UNREADABLE, build_class, misconceptions, provided_changes, runtimes, status_mix
from grader.class_stats import class_statistics
from grader.report import svg
from grader.report.class_html import render_report
from grader.report.student_html import render_student_page
from grader.results import Feedback, ProvidedChange, ScenarioResult, Status, SubmissionResult
from grader.visibility import Scope, Visibility

MIS_A, MIS_B = "detach kept the history", "the tape forgot"


def _scenario(sid: str, status: Status, duration: float, misconception: str | None = None,
              visibility: Visibility = Visibility.PUBLIC, points: float = 5.0) -> ScenarioResult:
    earned = points if status is Status.PASSED else 0.0
    return ScenarioResult(sid, f"title of {sid}", "t1" if sid < "s3" else "t2", earned, points, status,
                          Feedback(summary="s", what="w", expected="e", got="g", misconception=misconception),
                          duration, visibility, program=f"def {sid}(ad):\n    return 1\n"
                          if visibility is Visibility.PUBLIC else None)


def _document(*scenarios: ScenarioResult, error: str | None = None, changes=()) -> dict:
    score = sum(s.points for s in scenarios)
    return SubmissionResult("a", "d", "/home/teacher/x.py", "f" * 64, 7, Scope.ALL, score, 15.0, (), scenarios, "0",
                            ("rlimits", "uid-drop"), error=error, provided_changes=changes).to_dict()


def _class():
    p, f = Status.PASSED, Status.FAILED
    documents = [
        ("ann", _document(_scenario("s1", p, 0.010), _scenario("s2", p, 0.020), _scenario("s3", p, 0.030)), 1.0),
        # Two scenarios name the same misconception: it counts once for the student.
        ("ben", _document(_scenario("s1", f, 0.012, MIS_A), _scenario("s2", f, 0.022, MIS_A),
                          _scenario("s3", Status.TIMEOUT, 1.0, MIS_B)), 1.0),
        ("cy", _document(_scenario("s1", p, 0.014), _scenario("s2", f, 0.024, MIS_A), _scenario("s3", p, 0.034),
                         changes=(ProvidedChange("Tensor.backward", "changed", 3, 9),)), 1.0),
        ("dee", _document(*(_scenario(s, Status.NOT_RUN, 0.0) for s in ("s1", "s2", "s3")),
                          error="SyntaxError: x"), 1.0),
        ("eve", {"not": "a result"}, 1.0),
    ]
    # A v1 document (no provided_changes key) mixes in: only "cy" records changes anyway.
    del documents[0][1]["provided_changes"]
    summary = {"assignment": "a", "title": "T", "max_score": 15.0, "seed": 7,
               "ungradable": [{"student_id": "dee", "reason": "SyntaxError: x"},
                              {"student_id": "fay", "reason": "no autodiff.py in fay/"}]}
    return build_class(documents, summary)


def test_build_class_keeps_every_student_with_a_row():
    data = _class()
    assert [s.student_id for s in data.students] == ["ann", "ben", "cy", "dee", "eve", "fay"]
    by_id = {s.student_id: s for s in data.students}
    assert by_id["eve"].row.error == UNREADABLE and not by_id["eve"].row.has_result
    assert by_id["fay"].row.error == "no autodiff.py in fay/" and by_id["fay"].row.score == 0
    assert [s.student_id for s in data.graded] == ["ann", "ben", "cy"]
    assert [s.id for s in data.scenarios] == ["s1", "s2", "s3"] and [t.id for t in data.tasks] == ["t1", "t2"]


def test_views_count_graded_submissions():
    data = _class()
    mix = status_mix(data)
    assert mix[1] == {Status.PASSED: 1, Status.FAILED: 2} and mix[2][Status.TIMEOUT] == 1
    found = {m.text: m for m in misconceptions(data)}
    assert found[MIS_A].students == 2 and found[MIS_A].scenarios == (("s2", 2), ("s1", 1))
    assert found[MIS_B].students == 1
    s1 = runtimes(data)[0]
    assert (s1.runs, s1.median, s1.max) == (3, 0.012, 0.014)
    assert abs(s1.p90 - 0.0136) < 1e-12                  # 0.012 + 0.8 * (0.014 - 0.012)
    recorded, changed = provided_changes(data)
    assert recorded and changed == [("cy", (ProvidedChange("Tensor.backward", "changed", 3, 9),))]


def test_the_page_is_a_function_of_the_data_and_its_plots_are_labelled():
    data = _class()
    stats = class_statistics(data.rows, data.columns, {s.id: s.max_points for s in data.scenarios})
    page = render_report(data, stats, generated="Made at noon", with_students=True)
    assert page == render_report(_class(), stats, generated="Made at noon", with_students=True)
    assert page.count("Made at noon") == 1
    for plot in re.findall(r'<svg role="img" aria-labelledby="([^"]+)"', page):
        title, desc = plot.split()
        assert re.search(rf'<title id="{title}">[^<]+</title><desc id="{desc}">[^<]{{20,}}</desc>', page)
    assert 'data-label="detach kept the history" data-value="2"' in page
    assert '<a href="students/fay.html">fay</a>' in page and 'class="sortable"' in page
    assert "Tensor.backward" in page


def test_svg_escapes_text_and_writes_every_value():
    figure = svg.horizontal_bars("p", "A <title>", "desc & more", [("x < y", 3, "3 found")], "count")
    assert "A &lt;title&gt;" in figure and "desc &amp; more" in figure and "x &lt; y" in figure
    assert ">3 found</text>" in figure


def test_a_students_page_shows_public_programs_and_never_hidden_ones():
    result = SubmissionResult.from_dict(_document(
        _scenario("s1", Status.FAILED, 0.01, MIS_A), _scenario("s3", Status.FAILED, 0.01, MIS_B, Visibility.HIDDEN)))
    page = render_student_page("ben", result, title="T", hidden_shown_to="after_published")
    assert "def s1(ad):" in page and "title of s3 (hidden scenario)" in page and MIS_B in page
    assert "def s3(" not in page and "/home/teacher" not in page
    hidden = render_student_page("ben", result, title="T", hidden_shown_to="hidden")
    assert "title of s3" not in hidden and MIS_B not in hidden and "0 of 1 scenarios passed" in hidden
    error = render_student_page("fay", None, title="T", error="no autodiff.py in fay/")
    assert "could not be graded: no autodiff.py in fay/" in error
