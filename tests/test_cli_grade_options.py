"""``grader grade``'s course-workflow options through the real CLI: regrading one student
(``--only``), overrides, lateness (``--deadline``, ``--late-penalty``) and students who submitted
nothing (``--missing zero``), on a small real class."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from buggy_fixtures import BUGGY

ROOT = Path(__file__).parent.parent
ASSIGNMENT = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ASSIGNMENT / "autodiff.py"


def grader(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def grade(submissions: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return grader("grade", str(submissions), "--assignment", str(ASSIGNMENT), "--out", str(out), "-j", "2", *extra)


def gradebook(out: Path) -> dict[str, dict]:
    return {row["student_id"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def stamps(out: Path) -> dict[str, tuple[int, int]]:
    """Each result file's inode and modification time (ns): a file rewritten gets new ones."""
    return {path.name: (path.stat().st_ino, path.stat().st_mtime_ns) for path in (out / "results").glob("*.json")}


@pytest.fixture
def submissions(tmp_path) -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "alice.py")
    shutil.copy(STUB, folder / "bob.py")
    shutil.copy(BUGGY / "detach_returns_self.py", folder / "carol.py")
    (folder / "dan.py").write_text("def detach(self)\n    return self\n")   # a syntax error
    return folder


def test_only_grades_the_students_it_names_and_leaves_every_other_result_file_alone(submissions, tmp_path):
    out = tmp_path / "out"
    assert grade(submissions, out, "--seed", "7").returncode == 1          # dan could not be graded
    before = stamps(out)
    shutil.copy(REFERENCE, submissions / "bob.py")                         # bob hands in again, and carol
    shutil.copy(REFERENCE, submissions / "carol.py")
    done = grade(submissions, out, "--only", "bob")
    assert done.returncode == 1, done.stderr
    assert "Graded 1 submission (3 unchanged since the last run) with seed 7" in done.stdout
    after = stamps(out)
    assert after["bob.json"] != before["bob.json"]
    assert {name: stamp for name, stamp in after.items() if name != "bob.json"} == \
        {name: stamp for name, stamp in before.items() if name != "bob.json"}, "the other files were not rewritten"
    rows = gradebook(out)
    assert rows["bob"]["score"] == "100" and rows["alice"]["score"] == "100"
    assert rows["carol"]["score"] != "100", "carol's stored result stands: --only did not name her"
    assert json.loads((out / "summary.json").read_text())["max"] == 100 and (out / "report.html").is_file()

    again = grade(submissions, out, "--only", "alice", "--only", "carol", "--force")
    assert "Graded 2 submissions (2 unchanged since the last run)" in again.stdout, again.stderr
    final = stamps(out)
    assert final["bob.json"] == after["bob.json"] and final["dan.json"] == after["dan.json"]
    assert final["alice.json"] != after["alice.json"] and gradebook(out)["carol"]["score"] == "100"


def test_only_refuses_a_student_the_class_does_not_have_before_anything_is_written(submissions, tmp_path):
    out = tmp_path / "out"
    assert grade(submissions, out, "--seed", "7").returncode == 1
    before = {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()}
    done = grade(submissions, out, "--only", "bbo")
    assert done.returncode == 2
    assert "Error: --only bbo: no such student in the submissions (did you mean 'bob'?)" in done.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()} == before


def test_only_in_a_class_not_graded_yet_is_refused(submissions, tmp_path):
    done = grade(submissions, tmp_path / "out", "--only", "bob")
    assert done.returncode == 2 and "grade the class without --only first" in done.stderr
    assert not (tmp_path / "out" / "results").exists() or not os.listdir(tmp_path / "out" / "results")
