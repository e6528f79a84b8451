"""The Gradescope results.json reporter, validated against a schema written from Gradescope's spec."""

import dataclasses
import json
from pathlib import Path

import jsonschema
import pytest

from grader.report import gradescope
from grader.results import Status
from grader.visibility import hidden_visibility_problem

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "gradescope_results.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def validate(document):
    VALIDATOR.validate(document)
    # Beyond the schema (where everything is optional): the fields we promise in issue 4.
    assert {"score", "output", "visibility", "stdout_visibility", "tests"} <= document.keys()
    for test in document["tests"]:
        assert {"name", "number", "score", "max_score", "status", "output", "visibility"} <= test.keys()


def test_correct_submission(correct):
    document = gradescope.to_results_json(correct)
    validate(document)
    assert document["score"] == 6 and document["visibility"] == "visible"
    assert document["stdout_visibility"] == "hidden" and document["output_format"] == "text"
    assert document["execution_time"] == round(correct.timings["total"], 3)
    assert "6/6 points" in document["output"]
    assert [(t["name"], t["number"], t["status"]) for t in document["tests"]] == [
        ("square_values: square(x) on random x", "1.1", "passed"),
        ("grad_values: grad_square(x) on random x", "2.1", "passed"),
        ("fresh_state: a scenario starts from the module as imported", "1.2", "passed"),
    ]
    assert sum(t["score"] for t in document["tests"]) == document["score"]


def test_output_printed_at_import_is_in_the_top_level_output(correct):
    document = gradescope.to_results_json(dataclasses.replace(correct, import_stdout="loaded\n"))
    validate(document)
    assert "Printed on stdout while importing squares.py:\n    loaded" in document["output"]
    assert "Printed on" not in gradescope.to_results_json(correct)["output"]


def test_wrong_values_are_explained(wrong):
    document = gradescope.to_results_json(wrong, execution_time=2.5)
    validate(document)
    assert document["execution_time"] == 2.5
    failed = [t for t in document["tests"] if t["status"] == "failed"]
    assert [t["name"].split(":")[0] for t in failed] == ["square_values"]
    assert failed[0]["score"] == 0 and failed[0]["max_score"] == 2
    assert "returned 2x, the gradient" in failed[0]["output"]  # the misconception
    assert "sq.square(x)" in failed[0]["output"]  # a public scenario shows what it ran
    assert document["score"] == wrong.score == 4


def with_hidden(result, *ids, program=None):
    """``result`` as if the scenarios ``ids`` were hidden ones (graded with visibility "all")."""
    scenarios = tuple(dataclasses.replace(s, visibility="hidden", program=program or s.program) if s.id in ids
                      else s for s in result.scenarios)
    return dataclasses.replace(result, scenarios=scenarios, visibility="all")


def test_hidden_scenario_keeps_its_program_secret(wrong):
    secret = "def square_values(sq, x):  # SECRET hidden program\n"
    result = with_hidden(wrong, "square_values", program=secret)
    for level in ("after_due_date", "after_published", "visible"):
        document = gradescope.to_results_json(result, hidden_visibility=level)
        validate(document)
        hidden = document["tests"][0]
        assert hidden["visibility"] == level and hidden["status"] == "failed"
        assert "SECRET" not in hidden["output"] and "Expected" in hidden["output"]
        assert {t["visibility"] for t in document["tests"][1:]} == {"visible"}
    assert gradescope.to_results_json(result)["tests"][0]["visibility"] == "after_published"


def test_what_students_always_see_leaves_hidden_points_out(correct):
    result = with_hidden(correct, "grad_values")  # 3 of the 6 points are hidden, and earned
    for level, when in (("after_published", "when the grades are published"), ("after_due_date", "after the due date")):
        document = gradescope.to_results_json(result, hidden_visibility=level)
        validate(document)
        assert document["output"].startswith(f"Public scenarios: 3/3 points, 2 of 2 passed. 1 hidden scenario "
                                              f"(worth 3 more) is shown {when}.")
        assert "6/6" not in document["output"] and "6 points" not in document["output"]
        assert document["score"] == 6  # the grade itself: Gradescope hides the total while a test waits
        assert [t["visibility"] for t in document["tests"]].count(level) == 1
    visible = gradescope.to_results_json(result, hidden_visibility="visible")
    assert visible["output"].startswith("6/6 points, 3 of 3 scenarios passed")


def test_hidden_is_refused_while_hidden_scenarios_carry_points(correct):
    with pytest.raises(ValueError, match=r"would show students, before publication, a total that includes the "
                                         r"hidden scenarios' 3 points"):
        gradescope.to_results_json(with_hidden(correct, "grad_values"), hidden_visibility="hidden")
    free = with_hidden(correct, "fresh_state")  # made a 0-point hidden scenario: nothing to reveal
    free = dataclasses.replace(free, scenarios=tuple(dataclasses.replace(s, points=0, max_points=0)
                                                     if s.id == "fresh_state" else s for s in free.scenarios))
    document = gradescope.to_results_json(free, hidden_visibility="hidden")
    validate(document)
    assert hidden_visibility_problem("hidden", 0) is None
    assert "after_published" in hidden_visibility_problem("hidden", 0.5)


def test_unknown_visibility_is_refused(correct):
    with pytest.raises(ValueError, match="after_published"):
        gradescope.to_results_json(correct, hidden_visibility="private")


def test_ungradable_submission(ungradable):
    assert ungradable.error
    document = gradescope.to_results_json(ungradable)
    validate(document)
    assert document["score"] == 0
    assert ungradable.error in document["output"] and "could not be graded" in document["output"]
    assert {t["status"] for t in document["tests"]} == {"failed"}
    assert all(s.status is Status.NOT_RUN for s in ungradable.scenarios)


def test_dumps_is_strict_json(wrong):
    text = gradescope.dumps(wrong, hidden_visibility="hidden")
    assert text.endswith("\n")
    validate(json.loads(text))


@pytest.mark.parametrize("breakage", [
    lambda d: d.update(visibility="students"),
    lambda d: d["tests"][0].update(status="error"),
    lambda d: d["tests"][0].update(score="2"),
    lambda d: d["tests"][0].update(number=1.1),
    lambda d: d.update(output_format="markdown"),
    lambda d: d.update(leaderboard=[{"name": "Time", "value": 1, "order": "up"}]),
    lambda d: d["tests"][0].update(max_points=2),
    lambda d: [d.pop("score"), d["tests"][0].pop("score")],
])
def test_schema_rejects_wrong_documents(correct, breakage):
    document = gradescope.to_results_json(correct)
    breakage(document)
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(document)
