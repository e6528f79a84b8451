"""``grader grade`` reports every outcome truthfully and stops when asked (issue 15), through the real CLI."""

from __future__ import annotations

import csv
import io
import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from terminal_signals import default_signals

from grader import load_assignment

ROOT = Path(__file__).parent.parent
ASSIGNMENT = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ASSIGNMENT / "autodiff.py"
GRADER = [sys.executable, "-m", "grader"]
DETACH_BODY = '        raise NotImplementedError("Task 1: implement Tensor.detach")'


def grade(submissions: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [*GRADER, "grade", str(submissions), "--assignment", str(ASSIGNMENT), "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def gradebook(out: Path) -> dict[str, dict]:
    return {row["student_id"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def stub_with_detach(body: str) -> str:
    stub = STUB.read_text()
    assert stub.count(DETACH_BODY) == 1
    return stub.replace(DETACH_BODY, body)


def test_ctrl_c_stops_at_once_reports_the_true_count_and_the_rerun_completes(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for number in range(3):
        shutil.copy(REFERENCE, folder / f"a{number}.py")
    # It loops forever at import: only the import limit (10 s) would stop it.
    (folder / "zz_loops.py").write_text(STUB.read_text() + "\nwhile True:\n    pass\n")
    complete = tmp_path / "complete"
    assert grade(folder, complete, "--seed", "5", "-j", "2").returncode == 1  # the loop cannot be graded

    out = tmp_path / "out"
    command = [*GRADER, "grade", str(folder), "--assignment", str(ASSIGNMENT), "--out", str(out),
               "--seed", "5", "-j", "2"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_signals)
    deadline = time.monotonic() + 120
    while len(list((out / "results").glob("a*.json"))) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # the looping submission is importing now
    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = process.communicate(timeout=30)
    assert time.monotonic() - sent < 2.0, "Ctrl-C must stop the batch within a second or two"
    assert process.returncode == 130, stderr
    saved = len(list((out / "results").glob("*.json")))
    assert saved == 3 and "Interrupted: 3 results of this run are saved" in stderr, stderr
    assert "1 submission not graded yet" in stderr
    assert stderr.rstrip().endswith("Rerun the same command to grade the rest.")  # no progress line after it

    rerun = grade(folder, out, "-j", "2")
    assert rerun.returncode == 1 and "(3 unchanged since the last run)" in rerun.stdout
    assert (out / "gradebook.csv").read_text() == (complete / "gradebook.csv").read_text()


def test_a_rerun_renders_what_this_run_asks_for_from_stored_results(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "alice.py")
    shutil.copy(STUB, folder / "bob.py")
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "3").returncode == 0  # bob's stub scores 0, and was graded
    assert not (out / "gradescope").exists()
    assert json.loads((out / "rendering.json").read_text()) == {"hidden_visibility": "after_published"}
    written = {path.name: path.stat().st_mtime_ns for path in (out / "results").glob("*.json")}
    (out / "rendering.json").unlink()   # not known: a rerun with the same options renders again, writes nothing
    assert grade(folder, out).returncode == 0
    assert {path.name: path.stat().st_mtime_ns for path in (out / "results").glob("*.json")} == written
    assert json.loads((out / "rendering.json").read_text()) == {"hidden_visibility": "after_published"}
    rerun = grade(folder, out, "--format", "gradescope", "--hidden-visibility", "after_due_date",
                  "--junit", str(out / "junit.xml"))
    assert "(2 unchanged since the last run)" in rerun.stdout
    assert json.loads((out / "rendering.json").read_text()) == {"hidden_visibility": "after_due_date"}
    for student in ("alice", "bob"):
        document = json.loads((out / "gradescope" / f"{student}.json").read_text())
        hidden = [t for t in document["tests"] if t["visibility"] != "visible"]
        assert hidden and {t["visibility"] for t in hidden} == {"after_due_date"}
        native = json.loads((out / "results" / f"{student}.json").read_text())
        assert {t["visibility"] for t in native["tests"] if t["visibility"] != "visible"} == {"after_due_date"}
    assert (out / "junit.xml").is_file()
    grade(folder, out)  # native again: the Gradescope files of the earlier run go, results stay
    assert not (out / "gradescope").exists() and len(list((out / "results").glob("*.json"))) == 2


def test_every_ungradable_submission_scores_zero_of_the_maximum(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "latin1.py").write_bytes("# caf\xe9\n".encode("latin-1"))       # not UTF-8: a result with an error
    (folder / "huge.py").write_text("x = 1\n" * 300_000)                         # over 1 MB: a discovery problem
    (folder / "twice.py").write_text("x = 1\n")                                  # two submissions for one id
    (folder / "twice").mkdir()
    shutil.copy(STUB, folder / "twice" / "autodiff.py")
    out = tmp_path / "out"
    done = grade(folder, out, "--seed", "1")
    assert done.returncode == 1
    rows = gradebook(out)
    for student in ("latin1", "huge", "twice"):
        assert (rows[student]["score"], rows[student]["max_score"]) == ("0", "100"), rows[student]
        assert rows[student]["status"].startswith("error: ")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["graded"] == 0 and summary["max_score"] == 100
    assert summary["histogram"][0]["from"] == 0 and summary["histogram"][-1]["to"] == 100
    scenarios = load_assignment(ASSIGNMENT, hidden=ROOT / "solutions" / "autodiff").scenarios
    assert len(summary["scenarios"]) == len(scenarios) and all(s["rate"] is None for s in summary["scenarios"])


@pytest.mark.parametrize("option", ["--out", "--junit"])
def test_an_output_path_under_a_regular_file_is_a_usage_error(tmp_path, option):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "alice.py")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "out" if option == "--out" else tmp_path / "out"
    extra = ["--junit", str(blocker / "junit.xml")] if option == "--junit" else []
    done = grade(folder, out, *extra)
    assert done.returncode == 2, done.stderr
    assert f"Error: {option} " in done.stderr and f"{blocker} is a file" in done.stderr
    assert "internal error" not in done.stderr


def test_timings_count_a_submissions_own_work_not_its_wait(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    for number in range(3):  # each takes 2 s to import; one sandbox: the third waits 4
        (folder / f"slow{number}.py").write_text("import time\ntime.sleep(2)\n" + REFERENCE.read_text())
    out = tmp_path / "out"
    assert grade(folder, out, "--seed", "1", "-j", "1").returncode == 0
    totals = [json.loads((out / "results" / f"slow{n}.json").read_text())["timings"]["total"] for n in range(3)]
    assert all(2 <= total < 4 for total in totals), totals  # its own 2 s and its scenarios, never the wait


def test_progress_names_a_slow_submission_and_counts_ungradable_apart(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "slowpoke.py").write_text("import time\ntime.sleep(7)\n" + REFERENCE.read_text())
    (folder / "broken.py").write_text("def detach(self)\n")
    out = tmp_path / "out"
    done = grade(folder, out, "--seed", "1", "-j", "1")
    assert done.returncode == 1
    lines = done.stderr.splitlines()  # not a TTY: plain lines
    assert any("running slowpoke (" in line for line in lines), done.stderr
    assert "1 ungradable" in lines[-1] and "below full marks" not in lines[-1], lines[-1]
    assert "Graded 2 submissions (0 unchanged" in done.stdout
    single = tmp_path / "one"
    single.mkdir()
    shutil.copy(REFERENCE, single / "alice.py")
    assert "Graded 1 submission (0 unchanged" in grade(single, tmp_path / "out1").stdout


def test_a_runaway_is_not_waited_for_once_per_scenario(tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "autodiff.py").write_text(stub_with_detach("        while True:\n            pass"))
    began = time.monotonic()
    done = subprocess.run([*GRADER, "check", "autodiff.py", "--assignment", str(ASSIGNMENT), "--json", "--seed", "1"],
                          cwd=folder, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - began
    result = json.loads(done.stdout)
    timeouts = [s for s in result["scenarios"] if s["status"] == "timeout"]
    assert len(timeouts) >= 3, [s["id"] for s in timeouts]
    assert "did not finish within 5 s:" in timeouts[0]["feedback"]["summary"]
    assert all("cut to 1 s because another scenario of this task had already timed out" in s["feedback"]["summary"]
               for s in timeouts[1:])
    assert elapsed < 5 + len(timeouts) + 6, f"{elapsed:.1f} s for {len(timeouts)} timeouts"
