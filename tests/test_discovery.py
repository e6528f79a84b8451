"""Discovery on real folders and zips: who each file belongs to, and that every file is accounted for."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

import pytest

from grader import lms_names
from grader.discovery import Found, discover, find_submission
from grader.errors import UsageError
from grader.lms_names import NameSystem, Role, id_problem, owner_of_file, owner_of_folder, role_of
from grader.safe_unzip import MAX_UNPACKED, entry_name

CODE = b"def detach(x):\n    return x\n"


def make(folder: Path, *names: str, content: bytes = CODE) -> Path:
    for name in names:
        path = folder / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
    return folder


def run(source: Path, tmp_path: Path):
    return discover(source, "autodiff.py", tmp_path / "unpacked")


def ids(found) -> list[str]:
    return [item.student_id for item in found.submissions]


def unaccounted(found, folder: Path) -> set[str]:
    """The files under ``folder`` that are neither graded, nor named in a problem, nor ignored."""
    every = {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()}
    graded = {item.origin for item in found.submissions}
    ignored = [path for path, _ in found.ignored]
    return {path for path in every if path not in graded
            and not any(path == i or (i.endswith("/") and path.startswith(i)) for i in ignored)
            and not any(path in problem for problem in found.problems.values())}


# -- names -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, student, system, lms_id, inner", [
    ("smithjohn_12345_67890_autodiff.py", "smithjohn_12345", NameSystem.CANVAS, "12345", "autodiff.py"),
    ("smithjohn_12345_67890_autodiff (1).py", "smithjohn_12345", NameSystem.CANVAS, "12345", "autodiff (1).py"),
    ("smith-jonesann_1_2_autodiff.py", "smith-jonesann_1", NameSystem.CANVAS, "1", "autodiff.py"),
    ("zoë_5_6_autodiff.py", "zoë_5", NameSystem.CANVAS, "5", "autodiff.py"),
    ("o'brienpat_3_4_autodiff.py", "o'brienpat_3", NameSystem.CANVAS, "3", "autodiff.py"),
    ("leeann_late_777_123_autodiff-1.py", "leeann_777", NameSystem.CANVAS, "777", "autodiff-1.py"),
    ("leeann_LATE_777_123_autodiff.py", "leeann_777", NameSystem.CANVAS, "777", "autodiff.py"),
    ("LATE_anon_x7Yq2_555_autodiff.py", "anon_x7Yq2", NameSystem.CANVAS, None, "autodiff.py"),
    ("Jane Doe_123457_assignsubmission_file_autodiff.py", "Jane Doe_123457", NameSystem.MOODLE, "123457",
     "autodiff.py"),
    ("Group A-José Núñez_88_assignsubmission_file_autodiff.py", "Group A-José Núñez_88", NameSystem.MOODLE, "88",
     "autodiff.py"),
    ("Student 7.py", "Student 7", NameSystem.PLAIN, None, None),
    ("carl.PY", "carl", NameSystem.PLAIN, None, None),
    ("alice (2).py", "alice", NameSystem.PLAIN, None, None),
])
def test_file_names(name, student, system, lms_id, inner):
    owner = owner_of_file(name)
    assert (owner.student_id, owner.identity.system, owner.identity.lms_id, owner.inner_name) == (
        student, system, lms_id, inner)


def test_identities_carry_what_an_lms_matches_on():
    canvas = owner_of_file("leeann_late_777_123_autodiff.py").identity
    assert (canvas.display_name, canvas.file_id, canvas.late, canvas.gradebook_key) == ("leeann", "123", True, "777")
    moodle = owner_of_folder("Jane Doe_123457_assignsubmission_file_").identity
    assert (moodle.display_name, moodle.gradebook_key) == ("Jane Doe", "Participant 123457")
    assert owner_of_folder("alice").identity.gradebook_key is None


def test_names_are_compared_in_nfc():
    decomposed = "garci\u0301a.py"
    assert owner_of_file(decomposed).student_id == "garcía"


@pytest.mark.parametrize("name, role", [
    ("autodiff.py", Role.SUBMISSION), ("Autodiff.PY", Role.SUBMISSION), ("autodiff (1).py", Role.SUBMISSION),
    ("autodiff-2.py", Role.SUBMISSION), ("autodiff.ipynb", Role.SUBMISSION), ("hw1.py", Role.OTHER_CODE),
    ("autodiff.py.txt", Role.OTHER), ("autodiff.txt", Role.OTHER), ("autodiff", Role.OTHER),
])
def test_what_is_named_like_the_submission(name, role):
    assert role_of(name, "autodiff.py", (".py", ".ipynb")) is role


@pytest.mark.parametrize("student, fragment", [
    (".", "cannot name a file"), ("..", "cannot name a file"), ("a/b", "'/'"), ("a\0b", "NUL"),
    ("x" * (lms_names.MAX_ID_BYTES + 1), f"allows {lms_names.MAX_ID_BYTES}"),
    ("garc\udceda", "byte 0xED at character 5"),
])
def test_only_what_cannot_name_a_file_is_refused(student, fragment):
    assert fragment in id_problem(student)


@pytest.mark.parametrize("student", ["zoë", "o'brien", "Student 7", "smith-jones", "李雷", "a;b&c", "x" * 236])
def test_any_other_name_is_an_id(student):
    assert id_problem(student) is None


# -- folders ---------------------------------------------------------------------------------------

def test_the_names_of_issue_15_are_all_students(tmp_path):
    folder = make(tmp_path / "in", "carl.PY", "bob.ipynb", "zoë_5_6_autodiff.py", "o'brienpat_3_4_autodiff.py",
                  "Student 7.py", "smith-jonesann_1_2_autodiff.py",
                  "Jane Doe_123457_assignsubmission_file_autodiff.py",
                  "Ann Lee_99_assignsubmission_file_/autodiff.py")
    found = run(folder, tmp_path)
    assert ids(found) == ["Ann Lee_99", "Jane Doe_123457", "Student 7", "bob", "carl", "o'brienpat_3",
                          "smith-jonesann_1", "zoë_5"]
    assert not found.problems and not found.ignored
    assert all(item.path.is_file() for item in found.submissions)


def test_a_browser_copy_beside_the_original_is_a_second_submission(tmp_path):
    folder = make(tmp_path / "in", "smithjohn_12345_67890_autodiff.py", "smithjohn_12345_67890_autodiff (1).py",
                  "alice.py", "alice (1).py")
    found = run(folder, tmp_path)
    assert found.identities["smithjohn_12345"].gradebook_key == "12345"  # an error row is posted too
    assert found.identities["alice"].system is NameSystem.PLAIN
    assert found.problems == {
        "alice": "more than one submission for this student (alice (1).py, alice.py); keep one and rerun",
        "smithjohn_12345": "more than one submission for this student (smithjohn_12345_67890_autodiff (1).py, "
                           "smithjohn_12345_67890_autodiff.py); keep one and rerun"}


def test_every_file_is_graded_an_error_or_ignored(tmp_path):
    folder = make(tmp_path / "in", "alice.py", "alice.txt", "notes.md", ".DS_Store", "__MACOSX/._alice.py",
                  "bob/autodiff.py", "bob/helper.py", "bob/__pycache__/helper.cpython-311.pyc",
                  "bob/.ipynb_checkpoints/autodiff-checkpoint.ipynb", "Thumbs.db",
                  "smithjane_4242_987654_autodiff.py", "smithjane_4242_987654_notes.txt",
                  "kim_7_8_report.pdf", "gina/", "hana/hw1.py", "ivan/a.py", "ivan/b.py")
    found = run(folder, tmp_path)
    assert ids(found) == ["alice", "bob", "hana", "smithjane_4242"]
    assert found.problems == {
        "gina": "no autodiff.py in gina/",
        "ivan": "no autodiff.py for this student, and more than one file could be it (ivan/a.py, ivan/b.py); "
                "rename the one to grade autodiff.py and rerun",
        "kim_7": "kim_7_8_report.pdf: not a .py or .ipynb file, so not a submission; if it is the student's work, "
                 "rename it to end in .py and rerun",
        "notes": "notes.md: not a .py or .ipynb file, so not a submission; if it is the student's work, "
                 "rename it to end in .py and rerun",
    }
    why = dict(found.ignored)
    assert why["alice.txt"] == "another file of alice's, not the submission (graded: alice.py)"
    assert why["bob/helper.py"] == "another file of bob's, not the submission (graded: bob/autodiff.py)"
    assert why["smithjane_4242_987654_notes.txt"].startswith("another file of smithjane_4242's")
    assert why["__MACOSX/"].startswith("macOS zip metadata")
    assert why[".DS_Store"].startswith("macOS Finder") and why["Thumbs.db"].startswith("Windows Explorer")
    assert why["bob/__pycache__/"].startswith("Python's bytecode cache")
    assert why["bob/.ipynb_checkpoints/"].startswith("hidden")
    assert unaccounted(found, folder) == set()


def test_the_folder_form_looks_inside_and_prefers_the_top(tmp_path):
    folder = make(tmp_path / "in", "alice/autodiff.py", "alice/old/autodiff.py", "bob/src/Autodiff.py",
                  "carl/autodiff.py", "carl/autodiff (1).py")
    found = run(folder, tmp_path)
    assert [(item.student_id, item.origin) for item in found.submissions] == [
        ("alice", "alice/autodiff.py"), ("bob", "bob/src/Autodiff.py")]
    assert found.problems["carl"].startswith("more than one submission for this student (carl/autodiff (1).py, "
                                             "carl/autodiff.py)")
    assert dict(found.ignored)["alice/old/autodiff.py"].startswith("another file of alice's")


def test_a_folder_and_a_file_of_one_student_are_two_submissions(tmp_path):
    found = run(make(tmp_path / "in", "frank.py", "frank/autodiff.py"), tmp_path)
    assert found.problems == {"frank": "more than one submission for this student (frank.py, frank/autodiff.py); "
                                       "keep one and rerun"}


def test_a_wrapping_folder_is_looked_through(tmp_path):
    found = run(make(tmp_path / "in", "download/class/alice.py", "download/class/bob.py"), tmp_path)
    assert [(item.student_id, item.origin) for item in found.submissions] == [
        ("alice", "download/class/alice.py"), ("bob", "download/class/bob.py")]
    single = run(make(tmp_path / "one", "alice/autodiff.py"), tmp_path)
    assert ids(single) == ["alice"]
    moodle = run(make(tmp_path / "moodle", "Jane Doe_1_assignsubmission_file_/hw1.py"), tmp_path)
    assert ids(moodle) == ["Jane Doe_1"]


def test_moodle_online_text_is_another_file_of_the_student(tmp_path):
    folder = make(tmp_path / "in", "Jane Doe_123457_assignsubmission_file_/autodiff.py",
                  "Jane Doe_123457_assignsubmission_onlinetext_/onlinetext.html",
                  "Ann Lee_99_assignsubmission_onlinetext_/onlinetext.html")
    found = run(folder, tmp_path)
    assert ids(found) == ["Jane Doe_123457"]
    assert "onlinetext.html" in found.problems["Ann Lee_99"]
    assert dict(found.ignored)["Jane Doe_123457_assignsubmission_onlinetext_/onlinetext.html"].startswith(
        "another file of Jane Doe_123457's")


def test_files_that_cannot_be_graded_are_their_students_problem(tmp_path):
    folder = make(tmp_path / "in", "big.py", content=b"#" * 1_000_001)
    make(folder, "ok.py")
    os.symlink("/etc/passwd", folder / "linked.py")
    os.mkfifo(folder / "piped.py")
    found = run(folder, tmp_path)
    assert ids(found) == ["ok"]
    assert found.problems["big"] == ("big.py is 1,000,001 bytes; a submission may be at most 1,000,000 "
                                     "(check that the right file was handed in)")
    assert "is a symbolic link" in found.problems["linked"]
    assert "not a regular file" in found.problems["piped"]


def test_an_unreadable_file_or_folder_is_its_students_problem(tmp_path):
    """As root every file is readable: then the discovery runs as a spare uid of this agent's range."""
    base = Path(tempfile.mkdtemp(prefix="unreadable-"))  # /tmp/pytest-of-root is closed to other users
    try:
        base.chmod(0o755)
        folder = make(base / "in", "alice.py", "bob/autodiff.py", "carl.py")
        for path in (folder, folder / "carl.py", folder / "bob" / "autodiff.py"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        (folder / "alice.py").chmod(0)
        (folder / "bob").chmod(0)
        uid = int(os.environ.get("GRADER_SANDBOX_UID_BASE", "61000")) + 99
        # Imports first (the interpreter lives under /root), then the uid drop, then the discovery.
        program = ("import json, os, sys; from pathlib import Path; from grader.discovery import discover\n"
                   f"if os.geteuid() == 0: os.setgid({uid}); os.setuid({uid})\n"
                   "d = discover(Path(sys.argv[1]), 'autodiff.py', Path(sys.argv[2]))\n"
                   "print(json.dumps([[f.student_id for f in d.submissions], d.problems]))")
        done = subprocess.run([sys.executable, "-c", program, str(folder), str(base / "unpacked")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        submitted, problems = json.loads(done.stdout)
    finally:
        (base / "in" / "bob").chmod(0o755)
        shutil.rmtree(base)
    assert submitted == ["carl"]
    assert problems == {"alice": "alice.py could not be read (Permission denied); fix its permissions and rerun",
                        "bob": "bob/ could not be read (Permission denied); fix its permissions and rerun"}


def test_a_name_that_is_not_utf8_is_refused_with_the_byte(tmp_path):
    folder = make(tmp_path / "in", "alice.py")
    (folder / os.fsdecode(b"garc\xeda.py")).write_bytes(CODE)
    found = run(folder, tmp_path)
    assert ids(found) == ["alice"]
    [(key, problem)] = found.problems.items()
    assert key == "garc\\xeda" and "byte 0xED" in problem and problem.startswith("garc\\xeda.py: ")


def test_the_output_folder_inside_submissions_is_nobodys(tmp_path):
    folder = make(tmp_path / "in", "alice.py", "out/results/alice.json", "out/gradebook.csv")
    found = discover(folder, "autodiff.py", folder / "out" / ".work", exclude=folder / "out")
    assert ids(found) == ["alice"] and not found.problems
    assert found.ignored == [("out/", "this run's output folder (--out)")]


def test_nothing_to_grade_says_what_was_ignored(tmp_path):
    with pytest.raises(UsageError, match=r"nothing to grade in .* \(1 ignored: \.DS_Store\)"):
        run(make(tmp_path / "in", ".DS_Store"), tmp_path)


def test_found_made_by_hand_gets_a_plain_identity(tmp_path):
    assert Found("alice", tmp_path).identity.system is NameSystem.PLAIN


# -- zips ------------------------------------------------------------------------------------------

def zip_of(path: Path, entries: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as bundle:
        for name, data in entries.items():
            bundle.writestr(name, data)
    return path


def test_only_the_submissions_are_unpacked(tmp_path):
    archive = zip_of(tmp_path / "class.zip", {"alice.py": CODE, "bob/autodiff.py": CODE, "bob/notes.txt": b"hi",
                                              "bob/data/huge.bin": b"\0" * 5_000_000})
    found = run(archive, tmp_path)
    assert ids(found) == ["alice", "bob"]
    assert found.submissions[1].path == tmp_path / "unpacked" / "bob" / "autodiff.py"
    unpacked = sorted(str(p.relative_to(tmp_path / "unpacked")) for p in (tmp_path / "unpacked").rglob("*")
                      if p.is_file())
    assert unpacked == ["alice.py", "bob/autodiff.py"]
    assert dict(found.ignored)["bob/data/huge.bin"].startswith("another file of bob's")


def test_a_compressible_entry_is_its_students_error_not_the_archives(tmp_path):
    archive = zip_of(tmp_path / "class.zip", {"alice.py": CODE, "bomb.py": b"#" * 3_000_000, "carl.py": CODE})
    assert zipfile.ZipFile(archive).getinfo("bomb.py").compress_size < 3_000_000 / 300
    found = run(archive, tmp_path)
    assert ids(found) == ["alice", "carl"]
    assert found.problems["bomb"].startswith("bomb.py is 3,000,000 bytes; a submission may be at most 1,000,000")
    assert not (tmp_path / "unpacked" / "bomb.py").exists()


def test_an_entry_that_lies_about_its_size_is_its_students_error(tmp_path):
    archive = zip_of(tmp_path / "class.zip", {"alice.py": CODE, "liar.py": b"x = 1\n" * 100},
                     compression=zipfile.ZIP_STORED)
    data = bytearray(archive.read_bytes())
    start = 0
    while (offset := data.find(b"PK\x01\x02", start)) != -1:  # central directory headers
        if data[offset + 46:offset + 46 + 7] == b"liar.py":
            struct.pack_into("<I", data, offset + 24, 10)  # the declared (uncompressed) size
        start = offset + 4
    archive.write_bytes(bytes(data))
    found = run(archive, tmp_path)
    assert ids(found) == ["alice"]
    assert found.problems["liar"].startswith("liar.py is damaged in the zip")
    assert not (tmp_path / "unpacked" / "liar.py").exists()


@pytest.mark.parametrize("name, message", [
    ("../../evil.py", "would be written outside the output folder"),
    ("/etc/evil.py", "would be written outside the output folder"),
    ("C:/evil.py", "would be written outside the output folder"),
    ("..\\..\\evil.py", "would be written outside the output folder"),
])
def test_escaping_entries_refuse_the_archive(tmp_path, name, message):
    archive = zip_of(tmp_path / "class.zip", {"alice.py": CODE, name: CODE})
    with pytest.raises(UsageError, match=message):
        run(archive, tmp_path)


def test_links_refuse_the_archive(tmp_path):
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        link = zipfile.ZipInfo("alice.py")
        link.create_system = 3
        link.external_attr = 0o120777 << 16
        bundle.writestr(link, "/etc/passwd")
    with pytest.raises(UsageError, match="is a symbolic link"):
        run(archive, tmp_path)


def test_too_much_to_unpack_refuses_the_archive(tmp_path, monkeypatch):
    import grader.safe_unzip
    monkeypatch.setattr(grader.safe_unzip, "MAX_UNPACKED", 2 * len(CODE))
    archive = zip_of(tmp_path / "class.zip", {"a.py": CODE, "b.py": CODE, "c.py": CODE})
    with pytest.raises(UsageError, match="unpack to 84 bytes; at most 56 are accepted"):
        run(archive, tmp_path)
    assert MAX_UNPACKED == 512 * 1024 * 1024


def test_info_zip_names_without_the_utf8_flag_are_read_as_utf8(tmp_path):
    folder = make(tmp_path / "made", "garcía/autodiff.py", "zoë.py")
    archive = tmp_path / "infozip.zip"
    subprocess.run(["zip", "-qr", str(archive), "garcía", "zoë.py"], cwd=folder, check=True)
    assert not any(info.flag_bits & 0x800 for info in zipfile.ZipFile(archive).infolist())
    found = run(archive, tmp_path)
    assert ids(found) == ["garcía", "zoë"]
    assert (tmp_path / "unpacked" / "garcía" / "autodiff.py").is_file()


def test_cp437_names_and_the_unicode_path_field(tmp_path):
    archive = tmp_path / "old.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("placehold", CODE)
        for name in ("Mueller.py", "Stale.py"):  # a Unicode Path field made for the name, then one made for another
            info = zipfile.ZipInfo(name)
            field = struct.pack("<BI", 1, zlib.crc32(b"Mueller.py")) + "Müller.py".encode()
            info.extra = struct.pack("<HH", 0x7075, len(field)) + field
            bundle.writestr(info, CODE)
    # A Windows tool's name: CP437 bytes (0xA1 is í), without the UTF-8 flag.
    archive.write_bytes(archive.read_bytes().replace(b"placehold", b"garc\xa1a.py"))
    infos = zipfile.ZipFile(archive).infolist()
    assert not any(info.flag_bits & 0x800 for info in infos)
    assert [entry_name(info) for info in infos] == ["garcía.py", "Müller.py", "Stale.py"]


def test_gradescope_finder_shares_the_rules(tmp_path):
    folder = make(tmp_path / "one", "Autodiff.PY", "notes.txt")
    assert find_submission(folder, "autodiff.py") == (folder / "Autodiff.PY", [])
    folder = make(tmp_path / "two", "autodiff.py", "autodiff (1).py")
    assert find_submission(folder, "autodiff.py") == (None, ["autodiff (1).py", "autodiff.py"])
    folder = make(tmp_path / "nested", "autodiff.py", "backup/autodiff.py", "__MACOSX/autodiff.py")
    assert find_submission(folder, "autodiff.py") == (folder / "autodiff.py", [])
    folder = make(tmp_path / "renamed", "hw1.py")
    assert find_submission(folder, "autodiff.py") == (folder / "hw1.py", [])
    assert find_submission(make(tmp_path / "none", "a.txt"), "autodiff.py") == (None, [])
