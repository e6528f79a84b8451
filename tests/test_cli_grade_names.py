"""``grader grade`` through the real CLI on the names and zips of issue 15: no student silently lost,
ids as the LMS gives them, Info-ZIP names decoded, and one student's compressible file one row."""

from __future__ import annotations

import csv
import io
import json
import random
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
ASSIGNMENT = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
GRADER = [sys.executable, "-m", "grader"]

ISSUE_NAMES = ["carl.PY", "bob.ipynb", "smithjohn_12345_67890_autodiff.py", "smithjohn_12345_67890_autodiff (1).py",
               "zoë_5_6_autodiff.py", "o'brienpat_3_4_autodiff.py", "Student 7.py", "smith-jonesann_1_2_autodiff.py",
               "Jane Doe_123457_assignsubmission_file_autodiff.py"]
MOODLE_FOLDER = "Ann Lee_99_assignsubmission_file_"


def grade(submissions: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [*GRADER, "grade", str(submissions), "--assignment", str(ASSIGNMENT), "--out", str(out),
               "--seed", "15", "-j", "2", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600)


def rows(out: Path) -> dict[str, dict]:
    return {row["student_id"]: row for row in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


@pytest.fixture(scope="module")
def named(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A folder of the issue's names (all the reference solution), with a Moodle folder and system files."""
    folder = tmp_path_factory.mktemp("names")
    for name in ISSUE_NAMES:
        shutil.copy(REFERENCE, folder / name)
    (folder / MOODLE_FOLDER).mkdir()
    shutil.copy(REFERENCE, folder / MOODLE_FOLDER / "autodiff.py")
    (folder / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")
    (folder / "smithjane_4242_987654_autodiff.py").write_text(REFERENCE.read_text())
    (folder / "smithjane_4242_987654_notes.txt").write_text("not a submission")
    out = tmp_path_factory.mktemp("out")
    return out, grade(folder, out)


def test_no_student_vanishes_and_every_lms_name_gives_its_id(named):
    out, done = named
    assert done.returncode == 1, done.stderr  # smithjohn has two submissions
    gradebook = rows(out)
    assert sorted(gradebook) == ["Ann Lee_99", "Jane Doe_123457", "Student 7", "bob", "carl", "o'brienpat_3",
                                 "smith-jonesann_1", "smithjane_4242", "smithjohn_12345", "zoë_5"]
    for student in ("Ann Lee_99", "Jane Doe_123457", "Student 7", "carl", "o'brienpat_3", "smith-jonesann_1", "zoë_5"):
        assert gradebook[student]["score"] == "100", (student, gradebook[student])
        assert (out / "results" / f"{student}.json").is_file()
    assert gradebook["smithjohn_12345"]["status"] == (
        "error: more than one submission for this student (smithjohn_12345_67890_autodiff (1).py, "
        "smithjohn_12345_67890_autodiff.py); keep one and rerun")
    assert gradebook["bob"]["status"]  # a notebook is a submission: it has its row, however it grades


def test_ignored_files_are_listed_in_the_summary_and_printed(named):
    out, done = named
    ignored = {entry["path"]: entry["why"] for entry in json.loads((out / "summary.json").read_text())["ignored"]}
    assert ignored == {
        ".DS_Store": "macOS Finder metadata (.DS_Store, ._*)",
        "smithjane_4242_987654_notes.txt": "another file of smithjane_4242's, not the submission "
                                           "(graded: smithjane_4242_987654_autodiff.py)"}
    assert "Ignored (2, all listed in summary.json):\n  .DS_Store: macOS Finder metadata" in done.stdout


def test_a_name_that_cannot_name_a_result_file_says_why(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    long_name = "é" * 120  # 240 bytes in UTF-8: a fine file name, but results/<id>.json's temporary is longer
    shutil.copy(REFERENCE, folder / f"{long_name}.py")
    shutil.copy(REFERENCE, folder / "alice.py")
    done = grade(folder, tmp_path / "out")
    assert done.returncode == 1, done.stderr
    [status] = [row["status"] for student, row in rows(tmp_path / "out").items() if student != "alice"]
    assert status.endswith("the student id is 240 bytes long (UTF-8); a result file name allows 236: "
                           "shorten the submission's name")


def test_a_moodle_zip_in_folders_made_by_info_zip_keeps_accents(tmp_path):
    made = tmp_path / "made"
    for student in ("José García_1001_assignsubmission_file_", "Zoë Brontë_1002_assignsubmission_file_"):
        (made / student).mkdir(parents=True)
        shutil.copy(REFERENCE, made / student / "autodiff.py")
    (made / "garcía").mkdir()
    shutil.copy(REFERENCE, made / "garcía" / "autodiff.py")
    archive = tmp_path / "moodle.zip"
    subprocess.run(["zip", "-qr", str(archive), "."], cwd=made, check=True)  # Info-ZIP: no UTF-8 flag
    assert not any(info.flag_bits & 0x800 for info in zipfile.ZipFile(archive).infolist())
    done = grade(archive, tmp_path / "out")
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(rows(tmp_path / "out")) == ["José García_1001", "Zoë Brontë_1002", "garcía"]
    assert (tmp_path / "out" / "results" / "garcía.json").is_file()


def test_one_compressible_file_is_its_students_row_and_its_neighbours_are_graded(tmp_path):
    rng = random.Random(15)
    lines = "".join(f"# {''.join(rng.choice('abcdefghij') for _ in range(30))}\n" for _ in range(1))
    padding = (lines * (3_000_000 // len(lines) + 1))[:3_000_000]
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.write(REFERENCE, "alice.py")
        bundle.writestr("bomb.py", padding)
        bundle.write(REFERENCE, "carl.py")
    info = zipfile.ZipFile(archive).getinfo("bomb.py")
    assert 300 < info.file_size / info.compress_size < 450  # ~370:1, over the old guard's 200:1
    done = grade(archive, tmp_path / "out")
    assert done.returncode == 1, done.stderr
    gradebook = rows(tmp_path / "out")
    assert gradebook["alice"]["score"] == gradebook["carl"]["score"] == "100"
    assert gradebook["bomb"]["status"].startswith("error: bomb.py is 3,000,000 bytes; a submission may be at most")
    assert not (tmp_path / "out" / ".work" / "unpacked" / "bomb.py").exists()


def test_grade_refuses_a_gradescope_visibility_that_would_reveal_hidden_points(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "alice.py")
    done = grade(folder, tmp_path / "out", "--format", "gradescope", "--hidden-visibility", "hidden")
    assert done.returncode == 2
    assert done.stderr.startswith("Error: --hidden-visibility hidden would show students, before publication, "
                                  "a total that includes the hidden scenarios' 45 points")
    assert not (tmp_path / "out" / "results").exists() or not list((tmp_path / "out" / "results").iterdir())
