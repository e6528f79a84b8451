"""The output seam (grader/report/outputs.py): a real batch announces to an output that records what
it is told, and writes no output of its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader.batch import BatchOptions, grade_batch
from grader.errors import UsageError
from grader.loading import load_assignment
from grader.report.output_files import ResultFiles
from grader.report.outputs import BatchEnd, BatchStart, Completed, Landed, Output
from grader.visibility import ShownTo

ROOT = Path(__file__).parent.parent
REFERENCE, STUB = ROOT / "solutions/autodiff/autodiff.py", ROOT / "exercises/autodiff/autodiff.py"


class Recorder(Output):
    def __init__(self, refuse: tuple[str, ...] = ()):
        self.refuse, self.told, self.updates = refuse, [], 0

    def check(self, start: BatchStart):
        self.told.append(("check", sorted(start.identities)))
        return self.refuse

    def started(self, start: BatchStart) -> None:
        self.told.append(("started",))

    def landed(self, landed: Landed) -> None:
        self.told.append(("landed", landed.student_id, landed.reused, landed.result.score))

    def progress(self, progress) -> None:
        self.updates += 1

    def finished(self, end: BatchEnd) -> None:
        self.told.append(("finished", [row.student_id for row in end.rows], end.summary.count, end.summary.graded))

    def completed(self, done: Completed) -> None:
        self.told.append(("completed", [student.student_id for student in done.class_data().students]))

    def interrupted(self, progress) -> None:
        self.told.append(("interrupted",))


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(ROOT / "exercises/autodiff", hidden=ROOT / "solutions/autodiff")


@pytest.fixture
def submissions(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "alice.py")
    shutil.copy(STUB, folder / "bob.py")
    (folder / "carol.py").write_text("def detach(self)\n")   # a syntax error: a result with an error
    return folder


def test_the_batch_announces_and_writes_no_output_itself(assignment, submissions, tmp_path):
    out, recorder = tmp_path / "out", Recorder()
    report = grade_batch(submissions, assignment, out, BatchOptions(jobs=2, seed=5), [recorder])
    told = recorder.told
    assert told[:2] == [("check", ["alice", "bob", "carol"]), ("started",)]
    landed = sorted(call for call in told if call[0] == "landed")
    assert [(student, reused) for _, student, reused, _ in landed] == [("alice", False), ("bob", False),
                                                                       ("carol", False)]
    assert landed[0][3] == 100 and landed[1][3] == 0
    # The class read back from OUT has only what is stored there: no result file (no output here
    # writes them), so only carol, whose error row comes from the summary.
    assert told[-2:] == [("finished", ["alice", "bob", "carol"], 3, 2), ("completed", ["carol"])]
    assert recorder.updates >= 3 and report.summary.count == 3 and report.graded == 3
    # What the batch keeps itself: its seed, the identities, the manifest. Every other file is an output's.
    assert sorted(path.name for path in out.iterdir() if not path.name.startswith(".")) == [
        "batch.json", "identities.json", "manifest.json"]


def test_a_rerun_announces_the_stored_results_as_reused(assignment, submissions, tmp_path):
    out = tmp_path / "out"
    grade_batch(submissions, assignment, out, BatchOptions(jobs=2, seed=5), [ResultFiles(ShownTo.AFTER_PUBLISHED)])
    recorder = Recorder()
    report = grade_batch(submissions, assignment, out, BatchOptions(jobs=2), [recorder])
    assert sorted(call[1:3] for call in recorder.told if call[0] == "landed") == [
        ("alice", True), ("bob", True), ("carol", True)]
    assert report.seed == 5 and report.reused == 3 and report.graded == 0


def test_an_output_refuses_the_class_before_anything_is_graded_or_written(assignment, submissions, tmp_path):
    out, first, second = tmp_path / "out", Recorder(refuse=("no Canvas id",)), Recorder(refuse=("no roster",))
    with pytest.raises(UsageError) as refused:
        grade_batch(submissions, assignment, out, BatchOptions(seed=5), [first, second])
    assert str(refused.value) == "no Canvas id\nno roster"
    assert [call[0] for call in first.told + second.told] == ["check", "check"]
    assert not (out / "batch.json").exists() and not (out / "identities.json").exists()
