"""The tiers of the tests (markers by file), and results of the engine-test assignment
(tests/fixtures/mini), graded once per session for reporter tests."""

import os
from pathlib import Path

import pytest

import grader

MINI = Path(__file__).parent / "fixtures" / "mini"

# Each file's tiers (pyproject.toml registers the markers). A file that starts sandboxes is
# "sandbox", its own or a session fixture's (correct, wrong, graded_class...); "slow" is what keeps
# `pytest -m "not slow"` at about a minute on two cores: whole classes, audits, releases, notebooks
# through the CLI, the red team, the browser and the cluster.
SANDBOX = {
    "test_assignment_content.py", "test_assignment_contract.py", "test_batch.py", "test_cli_assignment.py",
    "test_cli_audit.py", "test_cli_batch_outcomes.py", "test_cli_check.py", "test_cli_grade_names.py",
    "test_cli_grade_options.py", "test_cli_notebook.py", "test_cli_release.py", "test_cli_report.py",
    "test_cli_watch.py", "test_cluster.py", "test_cluster_envelope.py", "test_executor.py",
    "test_gradescope_package.py", "test_isolation_level.py", "test_job_folders.py", "test_jupyter_check.py",
    "test_merge.py", "test_outputs.py", "test_report_browser.py", "test_report_github_classroom.py",
    "test_report_gradebook.py", "test_report_gradescope.py", "test_report_html.py", "test_report_junit.py",
    "test_runner.py", "test_sandbox_cleanup.py", "test_sandbox_isolation.py", "test_sandbox_prestart.py",
    "test_sandbox_queue.py", "test_sandbox_recovery.py", "test_sandbox_side_by_side.py", "test_sandbox_startup.py",
    "test_sandbox_states.py",
}
SLOW = {
    "test_assignment_content.py", "test_batch.py", "test_cli_assignment.py", "test_cli_audit.py",
    "test_cli_batch_outcomes.py", "test_cli_grade_names.py", "test_cli_grade_options.py", "test_cli_notebook.py",
    "test_cli_release.py", "test_cli_report.py", "test_cluster.py", "test_gradescope_package.py",
    "test_jupyter_check.py", "test_merge.py", "test_report_browser.py", "test_sandbox_side_by_side.py",
}
TIERS = {"test_report_browser.py": ("browser",), "test_cluster.py": ("cluster",)}


def pytest_collection_modifyitems(items):
    for item in items:
        path = item.path
        if "redteam" in path.parts:
            names: tuple[str, ...] = ("redteam", "sandbox", "slow")
        else:
            names = (*TIERS.get(path.name, ()), *(("sandbox",) if path.name in SANDBOX else ()),
                     *(("slow",) if path.name in SLOW else ()))
        for name in names:
            item.add_marker(name)


@pytest.fixture(scope="session", autouse=True)
def spec_cache_folder(tmp_path_factory):
    """Parsed specs are cached in a folder of the test session's, not the user's (subprocesses too)."""
    previous = os.environ.get("GRADER_CACHE_DIR")
    os.environ["GRADER_CACHE_DIR"] = str(tmp_path_factory.mktemp("spec-cache"))
    yield
    if previous is None:
        os.environ.pop("GRADER_CACHE_DIR", None)
    else:
        os.environ["GRADER_CACHE_DIR"] = previous


@pytest.fixture(scope="session")
def assignment():
    return grader.load_assignment(MINI)


@pytest.fixture(scope="session")
def correct(assignment):
    """Full marks."""
    return grader.grade_submission(MINI / "squares.py", assignment, seed=1)


@pytest.fixture(scope="session")
def wrong(assignment, tmp_path_factory):
    """square() returns 2x: one scenario failed with a misconception."""
    path = tmp_path_factory.mktemp("wrong") / "squares.py"
    path.write_text((MINI / "squares.py").read_text().replace("** 2", "* 2"))
    return grader.grade_submission(path, assignment, seed=1)


@pytest.fixture(scope="session")
def ungradable(assignment, tmp_path_factory):
    """The file does not exist: a result with an error and nothing run."""
    return grader.grade_submission(tmp_path_factory.mktemp("missing") / "squares.py", assignment, seed=1)


CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Autodiff (55)
    Points Possible,,,,,100
"Smith, Jane",4242,S1,jsmith,Sec A,
"Lee, Ann",777,S2,alee,Sec A,
"Ref, Erence",9001,S3,ref0,Sec B,
"""
MOODLE_WORKSHEET = """Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed
Participant 123457,Jane Doe,jane@example.edu,Submitted for grading,,100.00,Yes
Participant 99,Nobody Here,nobody@example.edu,No submission,,100.00,Yes
"""


@pytest.fixture(scope="session")
def graded_class(tmp_path_factory):
    """A real graded batch of 62 students for the report's tests: the reference, the handout and
    every buggy fixture twice each, Canvas- and Moodle-named copies, and five that cannot be graded
    (graded once per session, through the real CLI, with every LMS gradebook)."""
    import shutil
    import subprocess
    import sys

    from buggy_fixtures import BUGGY

    root = Path(__file__).parent.parent
    reference, stub = root / "solutions/autodiff/autodiff.py", root / "exercises/autodiff/autodiff.py"
    folder = tmp_path_factory.mktemp("class")
    sources = [("ref", reference), ("handout", stub), *((p.stem, p) for p in sorted(BUGGY.glob("*.py")))]
    for name, source in sources:
        for copy in ("a", "b"):
            shutil.copy(source, folder / f"{name}-{copy}.py")
    shutil.copy(reference, folder / "smithjane_4242_987654_autodiff.py")                       # Canvas
    shutil.copy(BUGGY / "detach_returns_self.py", folder / "leeann_late_777_123_autodiff-1.py")  # Canvas, late
    shutil.copy(BUGGY / "persistent_inverted.py", folder / "Jane Doe_123457_assignsubmission_file_autodiff.py")
    (folder / "broken.py").write_text("def detach(self)\n    return self\n")                    # syntax error
    (folder / "empty").mkdir()                                                                 # nothing inside
    shutil.copy(stub, folder / "twice.py")
    (folder / "twice").mkdir()
    shutil.copy(stub, folder / "twice" / "autodiff.py")                                        # two submissions
    (folder / "notes.txt").write_text("not code")                                              # not a .py
    (folder / "cheat.py").write_text("import torch\n" + stub.read_text())                        # a forbidden import
    out = tmp_path_factory.mktemp("out")
    (out.parent / "canvas-roster.csv").write_text(CANVAS_ROSTER)
    done = subprocess.run([sys.executable, "-m", "grader", "grade", str(folder), "--assignment",
                           str(root / "exercises/autodiff"), "--out", str(out), "--seed", "19", "-j", "2",
                           "--format", "canvas", "--format", "lti", "--canvas-column", "Autodiff (55)",
                           "--roster", str(out.parent / "canvas-roster.csv")],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stdout + done.stderr   # some could not be graded
    return out, done
