"""The normal-user path: ``grader check`` run by an ordinary user, where Landlock is the only fence.

Runs only as root (CI): it creates a user with ``useradd`` and a copy of the interpreter that user
can run (ours lives under /root, mode 0700): the binary with its library search path pointed at
``$ORIGIN/../lib``, libpython, the standard library without its tests, numpy, click, PyYAML and the
grader package. The instructor's files are world-readable here on purpose: only the sandbox can keep
a submission from reading them, or from signalling the grader that runs as the same user.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from .attacks import BY_ID, ROOT
from .conftest import ASSIGNMENT, CANARY_TEXT, HIDDEN, REFERENCE, Arena

USER = "grader-redteam"
PYTHON_VERSION = f"python{sys.version_info.major}.{sys.version_info.minor}"
SKIP_STDLIB = shutil.ignore_patterns("test", "idlelib", "tkinter", "turtledemo", "ensurepip", "site-packages")


@pytest.fixture(scope="module")
def student():
    """(uid, gid) of an ordinary user, created for the test."""
    if os.geteuid() != 0:
        pytest.skip("needs root to create an ordinary user (run as root in CI)")
    if shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("useradd or setpriv is missing")
    try:
        pwd.getpwnam(USER)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
                              capture_output=True, text=True)
        if made.returncode != 0:
            pytest.skip(f"useradd failed: {made.stderr.strip()}")
    entry = pwd.getpwnam(USER)
    return entry.pw_uid, entry.pw_gid


@pytest.fixture(scope="module")
def place(student):
    """A world-readable folder with a runnable Python, the course files and the user's submissions."""
    base = Path(tempfile.mkdtemp(prefix="redteam-user-"))
    base.chmod(0o755)
    python = _portable_python(base / "python")
    course = base / "course"
    shutil.copytree(ASSIGNMENT, course / "exercises" / "autodiff")
    shutil.copytree(HIDDEN, course / "solutions" / "autodiff")
    canary, out = base / "canary" / "canary.txt", base / "out"
    for folder in (canary.parent, out, base / "work"):
        folder.mkdir()
        folder.chmod(0o777)
    canary.write_text(CANARY_TEXT)
    canary.chmod(0o666)
    subprocess.run(["chmod", "-R", "a+rX", str(base)], check=True)
    yield base, python, course, canary, out
    shutil.rmtree(base, ignore_errors=True)


def _portable_python(target: Path) -> Path:
    prefix = Path(sys.base_prefix)
    binary = target / "bin" / PYTHON_VERSION
    binary.parent.mkdir(parents=True)
    data = Path(os.path.realpath(sys.executable)).read_bytes()
    runpath = str(prefix / "lib").encode() + b"\0"
    if data.count(runpath) != 1 or len(b"$ORIGIN/../lib") >= len(runpath):
        pytest.skip("cannot relocate this interpreter (its library path is not a single RUNPATH entry)")
    binary.write_bytes(data.replace(runpath, b"$ORIGIN/../lib".ljust(len(runpath), b"\0")))
    binary.chmod(0o755)
    lib = target / "lib"
    lib.mkdir()
    for shared in (prefix / "lib").glob("libpython*"):
        shutil.copy2(shared, lib / shared.name, follow_symlinks=False)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    shutil.copytree(stdlib, lib / PYTHON_VERSION, ignore=SKIP_STDLIB, symlinks=True)
    site = lib / PYTHON_VERSION / "site-packages"
    site.mkdir()
    installed = Path(sysconfig.get_paths()["purelib"])
    for name in ("numpy", "numpy.libs", "click", "yaml", "_yaml"):
        if (installed / name).exists():
            shutil.copytree(installed / name, site / name, symlinks=True)
    shutil.copytree(ROOT / "grader", site / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    return binary


def check_as_student(student, place, submission: Path, name: str) -> tuple[int, dict]:
    """``grader check --json -v`` as the ordinary user; returns the exit code and the JSON it wrote."""
    base, python, course, _, out = place
    uid, gid = student
    result = out / f"{name}.json"
    with open(result, "w") as handle:
        os.chmod(result, 0o666)
        done = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--",
             str(python), "-P", "-m", "grader", "check", str(submission), "--assignment",
             str(course / "exercises" / "autodiff"), "--json", "--seed", "1"],
            cwd=base / "work", stdout=handle, stderr=subprocess.PIPE, timeout=120,
            env={"PATH": "/usr/bin:/bin", "HOME": str(base / "work"), "LANG": "C.UTF-8"})
    assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
    return done.returncode, json.loads(result.read_text())


def _submit(place, name: str, source: str) -> Path:
    folder = place[0] / "submissions" / name
    folder.mkdir(parents=True)
    path = folder / "autodiff.py"
    path.write_text(source)
    subprocess.run(["chmod", "-R", "a+rX", str(place[0] / "submissions")], check=True)
    return path


def _attack_source(place, attack_id: str) -> str:
    base, _, course, canary, out = place
    arena = Arena(base, canary, out, base, 9, "unused")
    places = {**arena.places(BY_ID[attack_id]), "REPO": str(course)}
    return BY_ID[attack_id].source(places)


def test_reference_gets_full_marks_under_landlock_alone(student, place):
    code, result = check_as_student(student, place, _submit(place, "reference", REFERENCE.read_text()), "reference")
    assert code == 0 and result["score"] == result["max_score"] > 0
    assert any(level.startswith("landlock-v") for level in result["isolation"])
    assert "uid-drop" not in result["isolation"]


@pytest.mark.parametrize("attack_id", ["read_solution", "read_hidden_scenarios", "files_in_output_folder",
                                       "kill_everything", "kill_parents", "forbidden_import_unhooked"])
def test_attack_earns_nothing_and_harms_nothing_as_a_normal_user(student, place, attack_id):
    code, result = check_as_student(student, place, _submit(place, attack_id, _attack_source(place, attack_id)),
                                    attack_id)
    assert code == 1 and result["score"] == 0   # and the grader, same user, survived to write it
    assert not [s for s in result["scenarios"] if s["task"] in ("detach", "tape") and s["status"] == "passed"]
    assert "landlock" in " ".join(result["isolation"])
    text = json.dumps(result)
    assert "ADOPTED-" not in text and "releasing the tape freed the records" not in text
    assert place[3].read_text() == CANARY_TEXT and os.listdir(place[3].parent) == ["canary.txt"]
