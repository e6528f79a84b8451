"""The HTML reporter (Jupyter's rich output): parsed back as XML, student text escaped."""

import dataclasses
import xml.etree.ElementTree as ET

from grader.report.html import render_html
from grader.results import Feedback, Status


def parse(html: str) -> ET.Element:
    return ET.fromstring(html)  # well-formed: every tag closed, every student string escaped


def test_a_passing_result_is_a_table_and_a_green_score(correct):
    root = parse(render_html(correct, title="Mini"))
    rows = root.findall(".//table/tr")
    assert [r.findtext("td[2]/code") for r in rows if r.find("td") is not None] == [
        s.id for t in correct.tasks for s in correct.scenarios if s.task == t.id]
    assert root.find(".//details") is None
    assert "Score: 6/6 points, 3 of 3 scenarios passed" in ET.tostring(root, encoding="unicode")


def test_failures_are_collapsible_with_the_misconception_listed_first(wrong):
    root = parse(render_html(wrong))
    failure = root.find(".//details")
    assert failure.findtext("summary/code") == "square_values"
    assert "Expected:" in failure.findtext("pre")
    misconception = next(s.feedback.misconception for s in wrong.scenarios if s.feedback.misconception)
    assert misconception in ET.tostring(root, encoding="unicode")


def test_student_text_and_warnings_are_escaped(wrong):
    hostile = dataclasses.replace(wrong, scenarios=tuple(
        dataclasses.replace(s, feedback=Feedback("<script>alert(1)</script>", stdout="</pre><b>x"),
                            status=Status.ERROR) for s in wrong.scenarios))
    hostile = dataclasses.replace(hostile, warnings=("autodiff.ipynb, cell 2, line 1: not graded: <img src=x>",))
    html = render_html(hostile)
    root = parse(html)
    assert "<script>" not in html and "<img" not in html
    assert root.find(".//script") is None
    assert "1 part of your notebook not graded" in ET.tostring(root, encoding="unicode")


def test_an_ungradable_submission_says_why(ungradable):
    root = parse(render_html(ungradable))
    assert "could not be graded" in ET.tostring(root, encoding="unicode")
    assert root.findtext(".//pre") == ungradable.error


def test_a_changed_provided_engine_is_named_as_the_console_names_it(wrong):
    from grader.provided import may_be_the_cause
    from grader.report.console import render
    from grader.results import ProvidedChange

    changes = (ProvidedChange("helper", "changed", 3, 7),)
    note = may_be_the_cause(changes)
    noted = tuple(dataclasses.replace(s, feedback=dataclasses.replace(s.feedback, provided_note=note))
                  if not s.passed else s for s in wrong.scenarios)
    changed = dataclasses.replace(wrong, provided_changes=changes, scenarios=noted)
    text = ET.tostring(parse(render_html(changed)), encoding="unicode", method="text")
    console = " ".join(render(changed, width=400).split())
    notice = console[console.index("You changed the provided engine: "):console.index("change it.") + 10]
    assert notice in " ".join(text.split())
    assert f"({note})" in " ".join(text.split())
