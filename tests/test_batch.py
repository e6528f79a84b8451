"""``grader grade`` through the real CLI: layouts, LMS names, zips, outputs, resume after SIGKILL."""

from __future__ import annotations

import csv
import io
import json
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import jsonschema
import pytest
from buggy_fixtures import BUGGY
from own_processes import sandboxes_below, wait_gone

ROOT = Path(__file__).parent.parent
ASSIGNMENT = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ASSIGNMENT / "autodiff.py"
SCHEMA = json.loads((ROOT / "grader" / "schema" / "result.schema.json").read_text())
GRADER = [sys.executable, "-m", "grader"]


def grade(submissions: Path, out: Path, *extra: str, check: bool = False) -> subprocess.CompletedProcess:
    command = [*GRADER, "grade", str(submissions), "--assignment", str(ASSIGNMENT), "--out", str(out), *extra]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def gradebook(out: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO((out / "gradebook.csv").read_text())))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory) -> Path:
    """A class folder with every kind of submission, as instructors get them."""
    folder = tmp_path_factory.mktemp("class")
    shutil.copy(REFERENCE, folder / "alice.py")                                  # correct
    shutil.copy(BUGGY / "detach_returns_self.py", folder / "bob.py")             # buggy
    (folder / "carol.py").write_text("def detach(self)\n    return self\n")      # broken
    hostile = STUB.read_text() + "\nimport os\nprint('{\"score\": 100}')\nos._exit(0)\n"
    (folder / "dave.py").write_text(hostile)                                     # hostile
    (folder / "erin").mkdir()                                                    # folder layout
    shutil.copy(REFERENCE, folder / "erin" / "autodiff.py")
    shutil.copy(STUB, folder / "frank.py")                                       # duplicate id...
    (folder / "frank").mkdir()
    shutil.copy(STUB, folder / "frank" / "autodiff.py")                          # ...twice
    shutil.copy(REFERENCE, folder / "smithjane_4242_987654_autodiff.py")         # Canvas
    shutil.copy(BUGGY / "persistent_inverted.py", folder / "leeann_late_777_123_autodiff-1.py")  # Canvas, late
    (folder / "smithjane_4242_987654_notes.txt").write_text("not a submission")
    (folder / "gina").mkdir()                                                    # nothing inside
    return folder


@pytest.fixture(scope="module")
def mixed_out(mixed, tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    out = tmp_path_factory.mktemp("out")
    return out, grade(mixed, out, "--seed", "7", "-j", "2", "--format", "gradescope",
                      "--junit", str(out / "junit.xml"))


def test_every_kind_of_submission_gets_its_row(mixed_out):
    out, done = mixed_out
    assert done.returncode == 1, done.stderr  # some could not be graded
    rows = {row["student_id"]: row for row in gradebook(out)}
    assert sorted(rows) == ["alice", "bob", "carol", "dave", "erin", "frank", "gina", "leeann_777",
                            "smithjane_4242"]
    assert rows["alice"]["score"] == rows["erin"]["score"] == rows["smithjane_4242"]["score"] == "100"
    assert 0 < float(rows["bob"]["score"]) < 100 and 0 < float(rows["leeann_777"]["score"]) < 100
    assert rows["carol"]["score"] == "0" and rows["carol"]["status"].startswith("error: carol.py, line 1")
    assert rows["dave"]["score"] == "0" and "stopped before the import finished" in rows["dave"]["status"]
    assert rows["frank"]["status"] == ("error: more than one submission for this student "
                                       "(frank.py, frank/autodiff.py); keep one and rerun")
    assert rows["gina"]["status"] == "error: no autodiff.py in gina/"


def test_every_result_file_follows_the_schema(mixed_out):
    out, _ = mixed_out
    files = sorted(p.stem for p in (out / "results").glob("*.json"))
    assert files == ["alice", "bob", "carol", "dave", "erin", "leeann_777", "smithjane_4242"]
    for path in (out / "results").glob("*.json"):
        document = json.loads(path.read_text())
        jsonschema.validate(document, SCHEMA)
        assert document["seed"] == 7 and document["visibility"] == "all"
        assert len(document["scenarios"]) == len(document["tests"]) > 30


def test_summary_and_printed_summary(mixed_out):
    out, done = mixed_out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["count"] == 9 and summary["graded"] == 5 and summary["seed"] == 7
    assert {u["student_id"] for u in summary["ungradable"]} == {"carol", "dave", "frank", "gina"}
    assert summary["max"] == 100 and 0 < summary["min"] < 100  # ungradable ones are not in the statistics
    assert summary["scenarios"][0]["rate"] <= summary["scenarios"][-1]["rate"]
    assert "5 of 9 submissions graded, 4 could not be graded" in done.stdout
    assert "Scenario pass rates (lowest first):" in done.stdout


def test_gradescope_and_junit_outputs(mixed_out):
    out, _ = mixed_out
    document = json.loads((out / "gradescope" / "alice.json").read_text())
    assert document["score"] == 100 and {t["visibility"] for t in document["tests"]} == {"visible", "after_published"}
    import xml.etree.ElementTree as ET
    suites = ET.parse(out / "junit.xml").getroot()
    assert {suite.get("name") for suite in suites} >= {"alice", "bob", "dave"}


def test_nothing_is_written_outside_out(mixed, mixed_out):
    names = sorted(p.name for p in mixed.iterdir())
    assert "results" not in names and "gradebook.csv" not in names


def test_a_rerun_reuses_every_result(mixed, mixed_out):
    out, _ = mixed_out
    before = (out / "gradebook.csv").read_text()
    again = grade(mixed, out, "-j", "2")
    assert "Graded 0 submissions (7 unchanged since the last run) with seed 7" in again.stdout
    assert (out / "gradebook.csv").read_text() == before


def test_zip_of_folders_and_zip_attacks(tmp_path):
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.write(REFERENCE, "download/alice/autodiff.py")
        bundle.write(STUB, "download/bob/autodiff.py")
    grade(archive, tmp_path / "out", "--seed", "1", "-j", "2", check=True)
    assert [row["score"] for row in gradebook(tmp_path / "out")] == ["100", "0"]

    escaping = tmp_path / "escape.zip"
    with zipfile.ZipFile(escaping, "w") as bundle:
        bundle.writestr("../../evil.py", "print('x')")
    done = grade(escaping, tmp_path / "out2")
    assert done.returncode == 2 and "would be written outside the output folder" in done.stderr
    assert not (tmp_path / "evil.py").exists()

    # A highly compressible entry is never inflated: it is its student's error row (issue 15, point 8).
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("alice.py", b"#" * 50_000_000)
    done = grade(bomb, tmp_path / "out3")
    assert done.returncode == 1, done.stderr
    assert gradebook(tmp_path / "out3")[0]["status"].startswith("error: alice.py is 50,000,000 bytes")


def test_empty_folder_and_missing_solutions_are_usage_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    done = grade(tmp_path / "empty", tmp_path / "out")
    assert done.returncode == 2 and done.stderr.startswith("Error: nothing to grade in")
    moved = tmp_path / "exercise"
    shutil.copytree(ASSIGNMENT, moved)
    done = subprocess.run([*GRADER, "grade", str(tmp_path / "empty"), "--assignment", str(moved), "--out",
                           str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 2 and "the hidden scenarios of 'autodiff' were not found" in done.stderr
    assert "pass --solutions DIR" in done.stderr


def test_sigkill_midway_then_rerun_gives_the_uninterrupted_gradebook(tmp_path):
    # A grader beside the suite (a student's check --watch from the same venv) keeps its sandbox up
    # throughout: the test judges only the sandboxes of the graders it started.
    (tmp_path / "beside").mkdir()
    shutil.copy(STUB, tmp_path / "beside" / "autodiff.py")
    beside = subprocess.Popen([*GRADER, "check", "--watch", "--assignment", str(ASSIGNMENT), "autodiff.py"],
                              cwd=tmp_path / "beside", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert "Score:" in _read_until(beside, "Score:"), "the grader beside did not check"
        assert sandboxes_below(beside.pid), "the grader beside keeps no sandbox"
        _sigkill_midway_then_rerun(tmp_path)
        assert beside.poll() is None and sandboxes_below(beside.pid)   # left alone
    finally:
        beside.send_signal(signal.SIGINT)
        beside.wait(timeout=30)


def _read_until(process: subprocess.Popen, text: str, timeout: float = 120) -> str:
    seen, deadline = "", time.monotonic() + timeout
    while text not in seen and time.monotonic() < deadline and process.poll() is None:
        seen += process.stdout.readline()
    return seen


def _sigkill_midway_then_rerun(tmp_path: Path) -> None:
    folder = tmp_path / "class"
    folder.mkdir()
    sources = [REFERENCE, STUB, *sorted(BUGGY.glob("*.py"))[:10]]
    for number, source in enumerate(sources):
        shutil.copy(source, folder / f"s{number:02d}.py")
    complete = tmp_path / "complete"
    grade(folder, complete, "--seed", "11", "-j", "2", check=True)

    out = tmp_path / "killed"
    command = [*GRADER, "grade", str(folder), "--assignment", str(ASSIGNMENT), "--out", str(out),
               "--seed", "11", "-j", "2"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list((out / "results").glob("*.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    ours = sandboxes_below(process.pid)   # the killed grader's sandboxes, as they run when it dies
    assert ours, "the grader had no sandbox running midway"
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = len(list((out / "results").glob("*.json")))
    assert 3 <= partial < len(sources), "the batch was not killed midway"
    assert not (out / "gradebook.csv").exists()

    rerun = subprocess.Popen([*GRADER, "grade", str(folder), "--assignment", str(ASSIGNMENT), "--out", str(out),
                              "-j", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # no --seed
    while rerun.poll() is None:   # the rerun's sandboxes, as long as it runs
        ours |= sandboxes_below(rerun.pid)
        time.sleep(0.05)
    stdout, stderr = rerun.communicate()
    assert rerun.returncode == 0, stdout + stderr
    assert f"({partial} unchanged since the last run) with seed 11" in stdout   # the folder remembers 11
    assert (out / "gradebook.csv").read_text() == (complete / "gradebook.csv").read_text()
    assert not list((out / "results").glob(".*.tmp"))
    assert wait_gone(ours) == set(), "a sandbox of these graders survived them (the wardens die with their grader)"


def test_an_empty_file_is_an_error_row_and_another_file_is_named_in_one_cell(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "ann.py")
    (folder / "ben.py").write_text("")
    (folder / "cas.py").write_text("\n   \n\t\n")
    (folder / "dot.py").write_text("# my notes\nprint('hello')\n")
    out = tmp_path / "out"
    done = grade(folder, out, "--seed", "4", "-j", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    rows = {row["student_id"]: row for row in gradebook(out)}
    assert rows["ben"]["status"] == "error: empty file: ben.py holds nothing (0 bytes); hand in the file you worked in"
    assert rows["cas"]["status"].startswith("error: empty file: cas.py holds only whitespace")
    assert rows["ben"]["score"] == "0" and rows["ben"]["provided_changes"] == ""
    assert rows["dot"]["status"] == "graded"
    assert rows["dot"]["provided_changes"] == "none of the provided engine (all its parts missing: another file)"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["graded"] == 2 and {u["student_id"] for u in summary["ungradable"]} == {"ben", "cas"}


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)], ids=["umask-022", "umask-077"])
def test_output_files_follow_the_umask_and_a_new_out_folder_is_private(tmp_path, umask, mode):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "smithjane_4242_987654_autodiff.py")
    out = tmp_path / "out"
    command = [*GRADER, "grade", str(folder), "--assignment", str(ASSIGNMENT), "--out", str(out), "--format",
               "canvas", "gradescope"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, umask=umask)
    assert done.returncode == 0, done.stdout + done.stderr
    report = subprocess.run([*GRADER, "report", str(out), "--with-students"], capture_output=True, text=True,
                            umask=umask)
    assert report.returncode == 0, report.stderr
    files = [out / name for name in ("report.html", "gradebook.csv", "summary.json", "canvas.csv", "manifest.json",
                                     "identities.json", "batch.json")]
    files += [*(out / "students").glob("*.html"), *(out / "results").glob("*.json"),
              *(out / "gradescope").glob("*.json"), *(out / "report").glob("*.csv")]
    assert len(files) > 12
    assert {path.name: oct(path.stat().st_mode & 0o777) for path in files} == \
        {path.name: oct(mode) for path in files}
    assert out.stat().st_mode & 0o777 == 0o700   # grades are personal data: a new OUT is the user's alone
    out.chmod(0o750)                             # an OUT the user opened keeps its permissions
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, umask=umask)
    assert again.returncode == 0 and out.stat().st_mode & 0o777 == 0o750


def test_a_rerun_that_reuses_every_result_ends_with_done_not_a_rate(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "ann.py")
    shutil.copy(STUB, folder / "ben.py")
    grade(folder, tmp_path / "out", "--seed", "2", check=False)
    rerun = grade(folder, tmp_path / "out")
    last = rerun.stderr.strip().splitlines()[-1]
    assert last.startswith("[2/2] done in 0:0") and last.endswith("2 reused"), rerun.stderr
    assert "/s" not in last and "ETA" not in last
