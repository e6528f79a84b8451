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


CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Autodiff (55)
    Points Possible,,,,,100
"Smith, Jane",4242,S1,jsmith,Sec A,
"Lee, Ann",777,S2,alee,Sec A,
"Ref, Erence",9001,S3,ref0,Sec B,
"Student, Test",1,,,Sec A,
"""


@pytest.fixture
def canvas_class(tmp_path) -> Path:
    """A Canvas download: Jane on time, Ann late (her name says so); the roster has a third student,
    Erence, who submitted nothing, and Canvas's test student."""
    folder = tmp_path / "canvas"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "smithjane_4242_987654_autodiff.py")
    shutil.copy(BUGGY / "detach_returns_self.py", folder / "leeann_late_777_123_autodiff-1.py")
    (tmp_path / "roster.csv").write_text(CANVAS_ROSTER)
    return folder


def lti(out: Path) -> dict[str, dict]:
    return {score["userId"]: score for score in map(json.loads, (out / "lti-scores.jsonl").read_text().splitlines())}


def canvas_scores(out: Path) -> dict[str, str]:
    return {row["ID"]: row[list(row)[-1]] for row in csv.DictReader(io.StringIO((out / "canvas.csv").read_text()))
            if row["ID"]}


def test_overrides_change_the_gradebooks_summary_and_report_never_the_results(canvas_class, tmp_path):
    out, roster = tmp_path / "out", tmp_path / "roster.csv"
    lms = ("--format", "canvas", "lti", "--roster", str(roster), "--canvas-column", "Autodiff (55)")
    assert grade(canvas_class, out, "--seed", "5", *lms).returncode == 0
    plain = {name: (out / name).read_bytes() for name in ("gradebook.csv", "summary.json", "canvas.csv")}
    results = {path.name: path.read_bytes() for path in (out / "results").glob("*.json")}
    jane, ann = "smithjane_4242", "leeann_777"
    raw_ann = float(gradebook(out)[ann]["score"])
    (tmp_path / "overrides.csv").write_text("student_id,points,comment,scenario\n"
                                            f"{ann},61,regrade request: partial credit,\n"
                                            f"{jane},3,copied half of it,d2l_detach_dz_dx\n")
    done = grade(canvas_class, out, *lms, "--overrides", str(tmp_path / "overrides.csv"))
    assert done.returncode == 0, done.stderr
    assert f"{ann}: score {raw_ann:g} -> 61: regrade request: partial credit" in done.stdout
    assert {path.name: path.read_bytes() for path in (out / "results").glob("*.json")} == results
    rows = gradebook(out)
    assert (rows[ann]["score"], rows[jane]["score"], rows[jane]["d2l_detach_dz_dx"]) == ("61", "97", "3")
    assert rows[jane]["override"] == "d2l_detach_dz_dx 6 -> 3: copied half of it"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["mean"], summary["max"], summary["statistics"]["scores"]["mean"]) == (79, 97, 79)
    assert summary["adjustments"]["overrides"] == [
        {"student_id": ann, "scenario": None, "from": raw_ann, "to": 61, "comment": "regrade request: partial credit"},
        {"student_id": jane, "scenario": "d2l_detach_dz_dx", "from": 6, "to": 3, "comment": "copied half of it"}]
    assert canvas_scores(out) == {"4242": "97", "777": "61"}
    assert lti(out)["777"]["scoreGiven"] == 61 and "set by the instructor" in lti(out)["777"]["comment"]
    report = (out / "report.html").read_text()
    assert 'id="adjustments"' in report and "regrade request: partial credit" in report
    assert (out / "report" / "overrides.csv").read_text().splitlines()[1].startswith(f"{ann},(the score),")
    # grader report makes its outputs as the batch did; a run without --overrides goes back to the results.
    (out / "canvas.csv").unlink()
    assert grader("report", str(out), "--format", "canvas", "--roster", str(roster), "--canvas-column",
                  "Autodiff (55)").returncode == 0
    assert canvas_scores(out) == {"4242": "97", "777": "61"}
    assert grade(canvas_class, out, *lms).returncode == 0
    assert {name: (out / name).read_bytes() for name in plain} == plain and not (out / "adjustments.json").exists()


def test_an_override_of_a_student_or_scenario_the_class_lacks_is_refused_before_anything_is_written(
        canvas_class, tmp_path):
    overrides = tmp_path / "overrides.csv"
    overrides.write_text("student_id,points,comment,scenario\nsmithjane_4424,50,typo,\n")
    out = tmp_path / "out"
    done = grade(canvas_class, out, "--overrides", str(overrides))
    assert done.returncode == 2
    assert f"Error: {overrides}:2: smithjane_4424 is not a student of this class (did you mean 'smithjane_4242'?)" \
        in done.stderr
    assert not (out / "batch.json").exists() and not (out / "results").exists()
    overrides.write_text("student_id,points,comment,scenario\nsmithjane_4242,5,typo,detach_propertys\n")
    done = grade(canvas_class, out, "--overrides", str(overrides))
    assert done.returncode == 2 and "scenario 'detach_propertys' is not one of the assignment's (did you mean " \
                                    "'detach_properties'?)" in done.stderr
    assert not (out / "batch.json").exists()


def test_a_late_penalty_keeps_the_raw_score_the_penalty_and_the_final_in_the_gradebook(canvas_class, tmp_path):
    out, roster = tmp_path / "out", tmp_path / "roster.csv"
    done = grade(canvas_class, out, "--seed", "5", "--late-penalty", "10", "--format", "canvas", "lti",
                 "--roster", str(roster))
    assert done.returncode == 0, done.stderr
    rows = gradebook(out)
    header = list(rows["leeann_777"])
    assert header[:8] == ["student_id", "score", "max_score", "status", "late", "late_penalty", "final_score",
                          "provided_changes"]
    raw = float(rows["leeann_777"]["score"])
    assert rows["leeann_777"]["late"] == "yes" and float(rows["leeann_777"]["late_penalty"]) == pytest.approx(raw / 10)
    assert float(rows["leeann_777"]["final_score"]) == pytest.approx(raw * 0.9)
    assert (rows["smithjane_4242"]["late_penalty"], rows["smithjane_4242"]["final_score"]) == ("", "100")
    assert float(canvas_scores(out)["777"]) == pytest.approx(raw * 0.9) == lti(out)["777"]["scoreGiven"]
    assert f"late: {raw:g} before the penalty" in lti(out)["777"]["comment"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["late"] == ["leeann_777"] and summary["adjustments"]["late_penalty"]["percent"] == 10
    assert summary["min"] == pytest.approx(raw * 0.9)
    assert f"Late penalty, 10% off (1):\n  leeann_777: {raw:g} - " in done.stdout


def test_deadline_marks_late_by_the_files_times_where_names_say_nothing(tmp_path):
    import time
    import zipfile
    folder = tmp_path / "plain"
    folder.mkdir()
    for name in ("early", "late"):
        shutil.copy(REFERENCE, folder / f"{name}.py")
    deadline = time.mktime((2026, 3, 1, 23, 59, 0, 0, 0, -1))       # this machine's local time
    os.utime(folder / "early.py", (deadline - 60, deadline - 60))
    os.utime(folder / "late.py", (deadline + 60, deadline + 60))
    out = tmp_path / "out"
    done = grade(folder, out, "--seed", "5", "--deadline", "2026-03-01T23:59", "--late-penalty", "50")
    assert done.returncode == 0, done.stderr
    rows = gradebook(out)
    assert (rows["early"]["late"], rows["late"]["late"]) == ("", "yes")
    assert (rows["early"]["final_score"], rows["late"]["final_score"]) == ("100", "50")
    identities = json.loads((out / "identities.json").read_text())
    assert identities["late"]["late"] is True and identities["late"]["late_by"] == "deadline"
    assert "late_by" not in identities["early"]
    # A zip keeps each file's time in its entry: the one unpacked for grading carries it.
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        for name, when in (("early.py", (2026, 3, 1, 23, 58, 0)), ("late.py", (2026, 3, 2, 0, 1, 0))):
            bundle.writestr(zipfile.ZipInfo(name, when), REFERENCE.read_bytes())
    done = grade(archive, tmp_path / "zipped", "--seed", "5", "--deadline", "2026-03-01T23:59")
    assert done.returncode == 0, done.stderr
    assert [row["late"] for row in gradebook(tmp_path / "zipped").values()] == ["", "yes"]
    # With an offset, the deadline is that instant: a day earlier, both are late.
    early = grade(folder, tmp_path / "utc", "--seed", "5", "--deadline", "2026-02-28T23:59:00+00:00")
    assert [row["late"] for row in gradebook(tmp_path / "utc").values()] == ["yes", "yes"], early.stderr


MOODLE_WORKSHEET = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                    "Last modified (submission),Last modified (grade),Feedback comments\n"
                    "Participant 11,Early Bird,early@example.edu,Submitted,,100.00,Yes,"
                    "\"Sunday, 1 March 2026, 11:58 PM\",-,\n"
                    "Participant 12,Late Comer,late@example.edu,Submitted,,100.00,Yes,"
                    "\"Monday, 2 March 2026, 12:05 AM\",-,\n"
                    "Participant 13,No Show,noshow@example.edu,No submission,,100.00,Yes,-,-,\n")


def test_deadline_reads_moodles_submission_times_and_missing_zero_fills_the_worksheet(tmp_path):
    folder = tmp_path / "moodle"
    folder.mkdir()
    for participant, name in ((11, "Early Bird"), (12, "Late Comer")):
        shutil.copy(REFERENCE, folder / f"{name}_{participant}_assignsubmission_file_autodiff.py")
        os.utime(next(folder.glob(f"{name}_*")), (0, 0))   # the files' own times say nothing here
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(MOODLE_WORKSHEET)
    out = tmp_path / "out"
    done = grade(folder, out, "--seed", "5", "--deadline", "2026-03-01T23:59", "--roster", str(worksheet),
                 "--format", "moodle-worksheet", "moodle", "--missing", "zero")
    assert done.returncode == 0, done.stderr
    rows = gradebook(out)
    assert (rows["Early Bird_11"]["late"], rows["Late Comer_12"]["late"]) == ("", "yes")
    filled = {row["Identifier"]: row for row in csv.DictReader(io.StringIO((out / "moodle-worksheet.csv").read_text()))}
    assert (filled["Participant 13"]["Grade"], filled["Participant 13"]["Feedback comments"]) == (
        "0.00", "no submission")
    assert filled["Participant 11"]["Grade"] == "100.00"
    moodle = {row["Email address"]: row for row in csv.DictReader(io.StringIO((out / "moodle.csv").read_text()))}
    assert (moodle["noshow@example.edu"][list(moodle["noshow@example.edu"])[1]],
            moodle["noshow@example.edu"]["Feedback"]) == ("0", "no submission")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["adjustments"]["no_submission"] == [{"id": "Participant 13", "name": "No Show"}]
    assert summary["late"] == ["Late Comer_12"]


def test_missing_zero_puts_roster_students_without_a_submission_into_every_lms_gradebook(canvas_class, tmp_path):
    out, roster = tmp_path / "out", tmp_path / "roster.csv"
    lms = ("--format", "canvas", "lti", "--roster", str(roster))
    assert grade(canvas_class, out, "--seed", "5", *lms).returncode == 0
    assert set(canvas_scores(out)) == set(lti(out)) == {"4242", "777"}, "by default their grade is left alone"
    done = grade(canvas_class, out, *lms, "--missing", "zero")
    assert done.returncode == 0, done.stderr
    assert canvas_scores(out) == {"4242": "100", "777": canvas_scores(out)["777"], "9001": "0"}
    erence = lti(out)["9001"]
    assert (erence["scoreGiven"], erence["comment"]) == (0, "no submission")
    # The AGS spec: Initialized, "the user has not started the activity"; a 0 given is a grade: FullyGraded.
    assert (erence["activityProgress"], erence["gradingProgress"]) == ("Initialized", "FullyGraded")
    assert "1" not in canvas_scores(out), "Canvas's test student is nobody"
    assert "No submission, 0 in the LMS gradebooks (1): Ref, Erence (9001)" in done.stdout
    assert "Ref, Erence" in (out / "report.html").read_text()
    assert (out / "report" / "no_submission.csv").read_text() == "id,name\n9001,\"Ref, Erence\"\n"
    assert "9001" not in (out / "gradebook.csv").read_text(), "the gradebook is of the submissions"
    refused = grade(canvas_class, tmp_path / "again", "--missing", "zero")
    assert refused.returncode == 2 and "--missing zero" in refused.stderr and "--roster" in refused.stderr
