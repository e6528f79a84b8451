"""What a worker sends back: strict JSON, checked against what the client asked for."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from grader.cluster.envelope import (
    Expected,
    FailureKind,
    WorkerBug,
    WorkerRefused,
    failure_message,
    read_result,
    result_message,
)
from grader.isolation_level import Requirement
from grader.results import Status
from grader.visibility import Scope


@pytest.fixture
def expected(assignment, correct):
    return Expected(assignment, Scope.PUBLIC, correct.seed, correct.submission_sha256, Requirement())


def document(result) -> dict:
    return json.loads(result_message(result, "tcp://10.0.0.7:4000"))


def test_a_result_comes_back_as_it_left(correct, wrong, expected):
    assert read_result(result_message(correct, "tcp://w:1"), expected, "squares.py") == correct
    assert read_result(result_message(wrong, "tcp://w:1"), replace(expected, submission_sha256=wrong.submission_sha256),
                       "squares.py") == wrong


def test_only_strict_json_text_is_read(correct, expected):
    text = result_message(correct, "tcp://w:1")
    with pytest.raises(WorkerRefused, match="not JSON text"):
        read_result(text.encode(), expected, "squares.py")
    with pytest.raises(WorkerRefused, match="not strict JSON"):
        read_result(text.replace('"seed": 1', '"seed": NaN'), expected, "squares.py")
    with pytest.raises(WorkerRefused, match="does not read"):
        read_result(json.dumps({"envelope": 99}), expected, "squares.py")
    broken = document(correct)
    del broken["result"]["scenarios"][0]["feedback"]
    with pytest.raises(WorkerRefused, match="that is not one"):
        read_result(json.dumps(broken), expected, "squares.py")


@pytest.mark.parametrize("change, message", [
    (lambda r: r.update(seed=2), "of another seed"),
    (lambda r: r.update(assignment_digest="0" * 64), "of another assignment digest"),
    (lambda r: r.update(submission_sha256="0" * 64), "of another submission content"),
    (lambda r: r.update(grader_version="9.9"), "of another grader version"),
    (lambda r: r.update(visibility="all"), "of another scope"),
    (lambda r: r["scenarios"].pop(), "does not have the assignment's scenarios"),
    (lambda r: r["scenarios"][0].update(max_points=99), "does not have the assignment's scenarios"),
    (lambda r: r["scenarios"][0].update(status="failed"), "points as failed"),
    (lambda r: r.update(score=r["score"] + 1), "do not add up to"),
    (lambda r: r.update(max_score=99), "do not add up to"),
])
def test_a_result_must_be_what_was_asked_for(correct, expected, change, message):
    tampered = document(correct)
    change(tampered["result"])
    with pytest.raises(WorkerRefused, match=message) as refused:
        read_result(json.dumps(tampered), expected, "squares.py")
    assert "tcp://10.0.0.7:4000 sent back a result for squares.py" in str(refused.value)


def test_a_result_below_the_required_isolation_is_refused(correct, expected):
    weak = replace(correct, isolation=("rlimits",))
    with pytest.raises(WorkerRefused, match="below the required rlimits,uid-drop: remove that worker"):
        read_result(result_message(weak, "w"), replace(expected, requirement=Requirement(uid_drop=True)), "s.py")
    # A file that could not even run reached no sandbox: nothing to protect.
    never_ran = replace(correct, isolation=(), error="squares.py, line 1: invalid syntax", score=0.0,
                        scenarios=tuple(replace(s, points=0.0, status=Status.NOT_RUN) for s in correct.scenarios))
    assert read_result(result_message(never_ran, "w"), replace(expected, requirement=Requirement(uid_drop=True)),
                       "s.py") == never_ran


def test_failures_say_whose_and_what(expected):
    with pytest.raises(WorkerRefused, match="tcp://w:1 cannot grade: it declares no sandbox slots"):
        read_result(failure_message(FailureKind.SETUP, "it declares no sandbox slots", "tcp://w:1"), expected, "s.py")
    with pytest.raises(WorkerBug, match="grading s.py raised on tcp://w:1:\nTraceback"):
        read_result(failure_message(FailureKind.BUG, "Traceback ...", "tcp://w:1"), expected, "s.py")
