"""``grader report`` and the report at the end of ``grader grade``, through the real CLI on a real
graded batch (conftest's graded_class): the page, its tables, the statistics, the students' pages,
and the LMS gradebooks against their importers' published rules."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import jsonschema
import pytest
from conftest import MOODLE_WORKSHEET

from grader.outdir import OutputFolder
from grader.reporting import write_report

GRADER = [sys.executable, "-m", "grader"]
SCHEMAS = Path(__file__).parent / "schemas"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*GRADER, *args], capture_output=True, text=True, timeout=300)


def table(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def results(out: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]


def test_grade_prints_where_the_report_is(graded_class):
    out, done = graded_class
    assert f"Report: {out / 'report.html'}" in done.stdout
    assert (out / "report.html").is_file()
    assert f"Canvas gradebook: {out / 'canvas.csv'}" in done.stdout


def test_the_page_is_self_contained_small_and_deterministic(graded_class, tmp_path):
    out, _ = graded_class
    html = (out / "report.html").read_text()
    # No resource from anywhere: every src/href is a fragment, a data: URL or a file of OUT.
    references = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert references and all(r.startswith(("#", "data:", "report/", "students/")) for r in references), references
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html
    assert len(html.encode()) < 300_000
    first = write_report(OutputFolder(out), html_path=tmp_path / "a.html", now=datetime(2030, 1, 2, 3, 4, tzinfo=UTC))
    second = write_report(OutputFolder(out), html_path=tmp_path / "b.html", now=datetime(2031, 5, 6, 7, 8, tzinfo=UTC))
    a, b = first.html.read_text().splitlines(), second.html.read_text().splitlines()
    assert len(a) == len(b)
    differing = [(x, y) for x, y in zip(a, b) if x != y]
    assert len(differing) == 1 and "2030-01-02 03:04 UTC" in differing[0][0] and "2031-05-06" in differing[0][1]


def test_statistics_in_summary_json_agree_with_the_tables(graded_class):
    out, _ = graded_class
    summary = json.loads((out / "summary.json").read_text())
    stats = summary["statistics"]
    assert set(stats) == {"scores", "alpha", "tasks", "scenarios", "thresholds"}
    assert stats["scores"]["n"] == summary["graded"] == 57
    assert [t["id"] for t in stats["tasks"]] == ["detach", "tape", "engine"]
    assert -1 <= stats["alpha"] <= 1
    scenarios = {row["scenario"]: row for row in table(out / "report" / "scenarios.csv")}
    first = json.loads(next((out / "results").glob("ref-a.json")).read_text())
    assert len(scenarios) == len(stats["scenarios"]) == len(first["scenarios"])
    for item in stats["scenarios"]:
        row = scenarios[item["id"]]
        assert float(row["difficulty"]) == pytest.approx(item["difficulty"])
        assert int(row["passed"]) == round(item["difficulty"] * int(row["runs"]))
        assert row["flags"] == ", ".join(item["flags"])
    # Every graded run is in the status mix, and only those.
    assert all(int(row["runs"]) == 57 for row in scenarios.values())
    scores = {row["statistic"]: row["value"] for row in table(out / "report" / "scores.csv")}
    assert scores["submissions"] == "62" and scores["ungradable"] == "5"


def test_misconception_counts_match_the_results(graded_class):
    out, _ = graded_class
    expected: Counter = Counter()
    for document in results(out):
        if document["error"] is None:
            expected.update({s["feedback"]["misconception"] for s in document["scenarios"]
                             if s["status"] != "passed" and s["feedback"]["misconception"]})
    rows = table(out / "report" / "misconceptions.csv")
    assert {row["misconception"]: int(row["submissions"]) for row in rows} == dict(expected)
    assert len(rows) >= 10


def test_every_table_is_a_csv(graded_class):
    out, _ = graded_class
    names = {p.stem for p in (out / "report").glob("*.csv")}
    assert names >= {"scores", "histogram", "ungradable", "tasks", "scenarios", "runtime", "misconceptions",
                     "provided_changes", "isolation", "ignored"}
    html = (out / "report.html").read_text()
    assert all(f'id="table-{name}"' in html or f"{name}.csv" in html for name in names)
    ungradable = {row["student_id"] for row in table(out / "report" / "ungradable.csv")}
    assert ungradable == {"broken", "cheat", "empty", "notes", "twice"}


def test_students_pages_honour_hidden_visibility(graded_class, tmp_path):
    out, _ = graded_class
    done = run("report", str(out), "--with-students", "--out", str(tmp_path / "elsewhere" / "class.html"))
    assert done.returncode == 0, done.stderr
    pages = {p.stem for p in (out / "students").glob("*.html")}
    assert len(pages) == 62 and {"broken", "empty", "ref-a", "Jane Doe_123457"} <= pages
    html = (tmp_path / "elsewhere" / "class.html").read_text()
    assert 'href="../../' not in html or "students/" in html
    link = re.search(r'<a href="([^"]*detach_returns_self-a\.html)"', html).group(1)
    assert (tmp_path / "elsewhere" / link).resolve() == (out / "students" / "detach_returns_self-a.html").resolve()
    document = json.loads((out / "results" / "detach_returns_self-a.json").read_text())
    page = (out / "students" / "detach_returns_self-a.html").read_text()
    hidden = [s for s in document["scenarios"] if s["visibility"] == "hidden"]
    public_failed = [s for s in document["scenarios"] if s["visibility"] == "public" and s["status"] != "passed"]
    assert hidden and public_failed
    assert "def d2l_detach_dz_dx(ad):" in page                   # a public scenario's program
    for scenario in hidden:
        assert f"def {scenario['id']}(" not in page             # a hidden one's never
    assert "Likely misconceptions" in page and f"Score: {stored_score(out, 'detach_returns_self-a')} of 100" in page
    assert "could not be graded" in (out / "students" / "empty.html").read_text()
    assert document["submission"] not in page                    # the instructor's path stays out


def stored_score(out: Path, student: str) -> str:
    """A student's score as the batch stored it (what every view of the class must agree with)."""
    return f"{json.loads((out / 'results' / f'{student}.json').read_text())['score']:g}"


# --------------------------------------------------------------------------- LMS gradebooks

CANVAS_NON_ASSIGNMENT = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                                   "Override Score|Override Grade|Override Status")


def canvas_import(text: str) -> tuple[list[tuple[str, str | None]], dict, list[tuple[str, str]]]:
    """What Canvas's GradebookImporter reads from ``text`` (its rules, restated): the assignment
    columns as (title, id), the Points Possible row, and each student row as (ID, score)."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], "not a Canvas header"
    assert re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3])
    student_columns = 5
    assert "Section" in header[student_columns - 1], "Section must end the student columns"
    assignments = []
    for name in header[student_columns:]:
        assert not CANVAS_NON_ASSIGNMENT.search(name), "a read-only column would be dropped"
        match = re.fullmatch(r"(.*)\s\((\d+)\)", name, re.DOTALL)
        assignments.append((match.group(1), match.group(2)) if match else (name, None))
    points, students = {}, []
    for row in rows[1:]:
        if "Points Possible" in row[0]:
            points = dict(zip(header[student_columns:], row[student_columns:]))
            continue
        assert row[1].isdigit(), "every student row has a Canvas user id"
        students.append((row[1], row[student_columns]))
    return assignments, points, students


def test_canvas_gradebook_follows_canvas_importer_rules(graded_class):
    out, done = graded_class
    assignments, points, students = canvas_import((out / "canvas.csv").read_text())
    assert assignments == [("Autodiff", "55")] and points == {"Autodiff (55)": "100"}
    late = stored_score(out, "leeann_777")
    assert dict(students) == {"4242": "100", "777": late}            # matched by the download's user ids
    rows = list(csv.DictReader(io.StringIO((out / "canvas.csv").read_text())))
    assert rows[1]["Student"] == "Lee, Ann" and rows[1]["SIS Login ID"] == "alee"   # joined with the roster
    assert "Left out (60; their LMS grade is not changed):" in done.stdout
    assert "Jane Doe_123457: a Moodle download's name, not a Canvas one" in done.stdout


def test_canvas_gradebook_gives_ungradable_submissions_zero(graded_class, tmp_path):
    out, _ = graded_class
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\nB Roken,31,,broken,S\nR Ef,32,,ref-a,S\n")
    done = run("report", str(out), "--format", "canvas", "--roster", str(roster))
    assert done.returncode == 0, done.stderr
    assert "the column 'Detaching computation" in done.stdout       # no id: matched by title, said so
    _, _, students = canvas_import((out / "canvas.csv").read_text())
    assert dict(students) == {"31": "0", "32": "100", "4242": "100", "777": stored_score(out, "leeann_777")}


def moodle_import(text: str, identity: str) -> list[tuple[str, float, str]]:
    """Moodle's CSV grade import (grade/import/csv), restated: a header of distinct names, at least
    two columns; the identity column is mapped and must be set on every row (a blank one keeps the
    previous row's user, an unknown one aborts the import); grades numeric, at most gradepointmax."""
    rows = list(csv.reader(io.StringIO(text)))
    header = [name.strip() for name in rows[0]]
    assert len(header) >= 2 and len(set(header)) == len(header)
    column = header.index(identity)
    found = []
    for row in rows[1:]:
        assert row[column].strip(), "a row without its user"
        grade = float(row[1])
        assert 0 <= grade <= 100
        found.append((row[column], grade, row[2]))
    return found


def test_moodle_gradebook_maps_participants_through_the_worksheet(graded_class, tmp_path):
    out, _ = graded_class
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(MOODLE_WORKSHEET)
    done = run("report", str(out), "--format", "moodle", "--roster", str(worksheet))
    assert done.returncode == 0, done.stderr
    rows = moodle_import((out / "moodle.csv").read_text(), "Email address")
    jane = stored_score(out, "Jane Doe_123457")
    assert [(email, grade) for email, grade, _ in rows] == [("jane@example.edu", float(jane))]
    assert rows[0][2].startswith(f"{jane}/100 points, ")
    done = run("report", str(out), "--format", "moodle", "--moodle-identity", "username")
    rows = moodle_import((out / "moodle.csv").read_text(), "Username")
    by_user = {user: (grade, feedback) for user, grade, feedback in rows}
    assert by_user["ref-a"][0] == 100 and by_user["broken"][0] == 0
    assert by_user["broken"][1].startswith("0 points: could not be graded: broken.py, line 1")
    assert "Jane Doe_123457" not in by_user and "pass --roster with the assignment's grading worksheet" in done.stdout


def test_lti_scores_follow_the_ags_score_json(graded_class):
    out, _ = graded_class
    done = run("report", str(out), "--format", "lti")
    assert done.returncode == 0, done.stderr
    schema = json.loads((SCHEMAS / "lti_ags_score.schema.json").read_text())
    scores = [json.loads(line) for line in (out / "lti-scores.jsonl").read_text().splitlines()]
    for score in scores:
        jsonschema.validate(score, schema)
        assert list(score) == ["userId", "scoreGiven", "scoreMaximum", "comment", "timestamp", "activityProgress",
                               "gradingProgress"]
    by_user = {score["userId"]: score for score in scores}
    assert by_user["4242"]["gradingProgress"] == "FullyGraded" and by_user["4242"]["scoreGiven"] == 100
    assert by_user["broken"]["gradingProgress"] == "Failed" and "broken.py, line 1" in by_user["broken"]["comment"]
    assert len(scores) == 61 and "Jane Doe_123457" not in by_user   # a participant id is no user id


@pytest.mark.parametrize(("column", "message"), [
    ("Autodiff(55)", "Canvas reads the assignment id only after a space, as in 'Autodiff (55)'"),
    ("Final Score", "Canvas's importer drops such columns as read-only totals"),
    ("ID", "one of Canvas's student columns"),
])
def test_a_canvas_column_canvas_would_misread_is_refused(graded_class, column, message):
    out, _ = graded_class
    done = run("report", str(out), "--format", "canvas", "--canvas-column", column)
    assert done.returncode == 2 and message in done.stderr


def test_usage_errors(tmp_path, graded_class):
    out, _ = graded_class
    (tmp_path / "empty").mkdir()
    done = run("report", str(tmp_path / "empty"))
    assert done.returncode == 2 and "has no summary.json" in done.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("name,points\nann,3\n")
    done = run("report", str(out), "--format", "canvas", "--roster", str(bad))
    assert done.returncode == 2 and "bad.csv:1: no column names a student" in done.stderr


def test_several_formats_follow_one_format_flag_as_the_readme_writes_them(graded_class, tmp_path):
    out, _ = graded_class
    for name in ("canvas.csv", "moodle.csv", "lti-scores.jsonl"):
        (out / name).unlink(missing_ok=True)
    done = run("report", str(out), "--format", "canvas", "moodle", "lti", "--moodle-identity", "username")
    assert done.returncode == 0, done.stderr
    assert all((out / name).is_file() for name in ("canvas.csv", "moodle.csv", "lti-scores.jsonl"))
    (out / "canvas.csv").unlink()
    (out / "lti-scores.jsonl").unlink()
    done = run("report", "--format", "lti", "canvas", str(out))   # the values stop at OUT
    assert done.returncode == 0, done.stderr
    assert (out / "canvas.csv").is_file() and (out / "lti-scores.jsonl").is_file()
    # grade too, mixed with a repeated flag.
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ann.py").write_text((Path(__file__).parent.parent / "exercises" / "autodiff" /
                                                "autodiff.py").read_text())
    graded = tmp_path / "out"
    done = run("grade", str(tmp_path / "class"), "--assignment", str(Path(__file__).parent.parent / "exercises" /
                                                                     "autodiff"),
               "--out", str(graded), "--format", "gradescope", "lti", "--format", "moodle")
    assert done.returncode == 0, done.stderr
    assert (graded / "gradescope" / "ann.json").is_file() and (graded / "lti-scores.jsonl").is_file()
    assert (graded / "moodle.csv").is_file()


def test_a_submission_canvas_marked_late_is_late_in_the_gradebook_summary_students_table_and_page(graded_class):
    out, done = graded_class   # leeann_late_777_123_autodiff-1.py: Canvas's _LATE_ mark
    gradebook = {row["student_id"]: row for row in table(out / "gradebook.csv")}
    assert gradebook["leeann_777"]["late"] == "yes"
    assert {student for student, row in gradebook.items() if row["late"]} == {"leeann_777"}
    assert json.loads((out / "summary.json").read_text())["late"] == ["leeann_777"]
    assert "Marked late by the LMS (1): leeann_777" in done.stdout
    assert run("report", str(out), "--with-students").returncode == 0
    students = {row["student_id"]: row for row in table(out / "report" / "students.csv")}
    assert students["leeann_777"]["late"] == "yes" and students["smithjane_4242"]["late"] == ""
    html = (out / "report.html").read_text()
    head = html[html.index('id="table-students"'):]
    assert "<th scope=\"col\">late</th>" in head[:head.index("</thead>")]
    assert "Submitted late" in (out / "students" / "leeann_777.html").read_text()
    assert "Submitted late" not in (out / "students" / "smithjane_4242.html").read_text()


def test_moodle_and_lti_gradebooks_that_would_import_nothing_are_refused_before_grading(tmp_path):
    root = Path(__file__).parent.parent
    folder = tmp_path / "moodle download"
    folder.mkdir()
    for name, source in (("Jane Doe_123457", "solutions/autodiff/autodiff.py"),
                         ("Bo Li_99", "exercises/autodiff/autodiff.py")):
        (folder / f"{name}_assignsubmission_file_autodiff.py").write_text((root / source).read_text())
    out = tmp_path / "out"
    for formats in (["moodle"], ["lti"], ["moodle-worksheet"]):
        done = run("grade", str(folder), "--assignment", str(root / "exercises" / "autodiff"), "--out", str(out),
                   "--format", *formats)
        assert done.returncode == 2, done.stdout + done.stderr
        assert not (out / "results").exists(), "refused before anything was graded"
    assert done.stderr.startswith("Error: --format moodle-worksheet fills in the assignment's grading worksheet: "
                                  "pass the one you downloaded as --roster FILE")
    done = run("grade", str(folder), "--assignment", str(root / "exercises" / "autodiff"), "--out", str(out),
               "--format", "moodle")
    assert "Error: --format moodle: none of the 2 students could be put in moodle.csv (Moodle's download names give " \
           "participant ids, which its grade import cannot match; pass --roster with the assignment's grading " \
           "worksheet" in done.stderr
    # Graded with the worksheet: both the import CSV (mapped through it) and the worksheet filled in.
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text('Identifier,"Full name","Email address",Status,Grade,"Maximum Grade","Grade can be changed",'
                         '"Last modified (submission)","Last modified (grade)","Feedback comments"\n'
                         '"Participant 123457","Jane Doe",jane@example.edu,"Submitted for grading",,100.00,Yes,'
                         '"Friday, 4 December 2026, 9:12 AM",-,\n'
                         '"Participant 99","Bo Li",bo@example.edu,"Submitted for grading",,100.00,Yes,'
                         '"Friday, 4 December 2026, 9:13 AM",-,\n')
    done = run("grade", str(folder), "--assignment", str(root / "exercises" / "autodiff"), "--out", str(out),
               "--format", "moodle-worksheet", "moodle", "--roster", str(worksheet))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Moodle grading worksheet: {out / 'moodle-worksheet.csv'} (2 students)" in done.stdout
    from test_lms_gradebooks import moodle_worksheet_upload
    taken = moodle_worksheet_upload((out / "moodle-worksheet.csv").read_text())
    assert {participant: grade for participant, (grade, _) in taken.items()} == {"123457": 100.0, "99": 0.0}
    # report refuses as grade does, and writes no file that imports nothing.
    done = run("report", str(out), "--format", "lti")
    assert done.returncode == 2
    assert "Error: --format lti: none of the 2 students could be put in lti-scores.jsonl (no LMS user id: a Moodle " \
           "participant id is not one" in done.stderr
    assert not (out / "lti-scores.jsonl").exists()
    (out / "identities.json").unlink()   # an older OUT: nobody known before the gradebook is made
    done = run("report", str(out), "--format", "canvas", "--roster", str(worksheet))
    assert done.returncode == 0 and "Canvas gradebook: not written, no student could be put in it" in done.stdout
    assert not (out / "canvas.csv").exists()


def test_a_students_page_names_what_was_changed_in_the_provided_engine_as_check_does(graded_class):
    import html

    from buggy_fixtures import BUGGY
    out, _ = graded_class
    assert run("report", str(out), "--with-students").returncode == 0
    checked = run("check", "--assignment", str(Path(__file__).parent.parent / "exercises" / "autodiff"),
                  str(BUGGY / "engine_mul_backward_swapped.py"))
    console = " ".join(checked.stdout.split())   # the console wraps to its width
    start = console.index("You changed the provided engine: ")
    notice = console[start:console.index("unless the exercise asks you to change it.", start) + 42]
    assert "`Tensor.__mul__` (lines " in notice
    page = " ".join(html.unescape((out / "students" / "engine_mul_backward_swapped-a.html").read_text()).split())
    assert notice in page   # the same line, the same parts
    assert "that change may be the cause; restore it from the handout to see." in page   # each failed task scenario
    untouched = html.unescape((out / "students" / "ref-a.html").read_text())
    assert "You changed the provided engine" not in untouched
