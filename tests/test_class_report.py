"""The class report's pure core on classes made by hand: grader.class_data (the class and its
tallies), grader.report.class_view (the report's view), grader.report.class_html and svg (the page,
from a view built from a class and from one written by hand), grader.report.student_html (a
student's page)."""

from __future__ import annotations

import inspect
import re
from array import array
from collections import Counter
from dataclasses import replace

import grader.class_data
from grader.class_data import (
    UNREADABLE,
    Misconception,
    Runtime,
    ScenarioInfo,
    TaskInfo,
    build_class,
    misconceptions,
    provided_changes,
    runtimes,
    status_mix,
)
from grader.report import class_html, class_tables, svg
from grader.report.class_html import render_report
from grader.report.class_view import ClassView, StudentLine, build_view
from grader.report.student_html import render_student_page
from grader.results import Feedback, ProvidedChange, ScenarioResult, Status, SubmissionResult
from grader.summary import Bin, Ungradable
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
    page = render_report(build_view(_class(), with_students=True), generated="Made at noon")
    assert page == render_report(build_view(_class(), with_students=True), generated="Made at noon")
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


def _view(**changes) -> ClassView:
    """A view written by hand: numbers no class of results would give together (so the page can
    only have read them from here)."""
    item = {"id": "s1", "task": "t1", "n": 3, "max_points": 4.0, "difficulty": 0.25, "item_rest": -0.5,
            "flags": ["too hard", "negative discrimination"]}
    distribution = {"n": 3, "mean": 1.5, "sd": 0.5, "median": 1.0, "min": 0.0, "max": 4.0, "at_zero": 1,
                    "at_full": 1, "max_score": 4.0}
    view = ClassView(
        assignment="hand", title="Made by hand", seed=99, max_score=4.0, submissions=5, graded=3,
        scenarios=(ScenarioInfo("s1", "the only scenario", "t1", 4.0, "hidden"),),
        tasks=(TaskInfo("t1", "The task", 4.0),),
        statistics={"scores": distribution, "alpha": 0.123, "scenarios": [item],
                    "tasks": [{"id": "t1", "items": 1, "alpha": None, "scores": distribution}]},
        histogram=(Bin(0.0, 2.0, 2), Bin(2.0, 4.0, 1)), ungradable=(Ungradable("zed", "no file in zed/"),),
        status_mix=(Counter({Status.PASSED: 1, Status.TIMEOUT: 2}),),
        misconceptions=(Misconception("confuses the tape with the graph", 7, (("s1", 7),)),),
        runtimes=(Runtime("s1", 3, 0.0425, 0.05, 0.0625),), isolation=((("rlimits", "seccomp"), 4),),
        provided_recorded=False, provided_changes=(), task_scores={"t1": array("d", [0.0, 4.0, 0.5])},
        ignored=(("notes.txt", "not a .py"),),
        students=(StudentLine("ann_1", "Ann One", 4.0, 4.0, "graded", True, 1, 0),))
    return replace(view, **changes)


def test_the_page_renders_a_view_written_by_hand():
    page = render_report(_view(), generated="Made by hand at noon", csv_href="tables/")
    assert "<title>Class report: Made by hand</title>" in page
    assert "Assignment <code>hand</code>, seed 99: 5 submissions, 3 graded, out of 4 points." in page
    assert 'data-label="confuses the tape with the graph" data-value="7"' in page   # the misconception plot
    assert "s1: too hard, negative discrimination" in page                         # the scatter's description
    assert ">42.5 ms<" in page and ">62.5 ms<" in page                            # runtime: median, longest
    assert "α = 0.12" in page and "rlimits, seccomp" in page and "no file in zed/" in page
    assert "Not recorded (results before schema version 2 do not record them)." in page
    assert '<a href="students/ann_1.html">ann_<wbr>1</a>' not in page           # a sortable table: no <wbr>
    assert '<a href="students/ann_1.html">ann_1</a>' in page and '<a href="tables/scores.csv">' in page
    assert "Scores on task The task" in page and "0–0.4: 1" in page             # the task's own histogram
    without = render_report(_view(students=None, provided_recorded=True), generated="-")
    assert "ann_1" not in without and "No submission changed the provided engine." in without
    tables = class_tables.report_tables(_view())
    assert tables["scenarios"].csv_rows() == [["s1", "the only scenario", "t1", "hidden", "4", "3", "1", "0", "0",
                                               "2", "0", "0", "0", "0.25", "-0.5",
                                               "too hard, negative discrimination"]]


def test_the_renderers_read_only_the_view():
    """No renderer calls back into the class's data: they import nothing from grader.class_data but
    the types a view is made of."""
    for module in (class_html, class_tables, svg):
        taken = {name for name, value in vars(module).items()
                 if getattr(value, "__module__", None) == grader.class_data.__name__}
        assert all(inspect.isclass(vars(module)[name]) for name in taken), (module.__name__, taken)
