"""--require-isolation's levels: parsed from names, met by what a sandbox reports."""

from __future__ import annotations

import subprocess
import sys

import pytest
from classes import ASSIGNMENT, REFERENCE

from grader.errors import UsageError
from grader.isolation_level import Requirement, announced, predicted

ROOT_LANDLOCK = ("rlimits", "uid-drop", "landlock-v7", "seccomp", "memory-limit", "pid-namespace", "net-namespace",
                 "ipc-namespace", "mount-namespace")


@pytest.mark.parametrize("text, requirement", [
    ("rlimits", Requirement()), ("uid-drop", Requirement(uid_drop=True)), ("landlock", Requirement(landlock=1)),
    ("landlock-v6", Requirement(landlock=6)), ("uid-drop,landlock-v6", Requirement(True, 6)),
    (" UID-DROP  landlock-v4 ", Requirement(True, 4)), ("rlimits,landlock-v2,landlock-v5", Requirement(False, 5)),
    ("seccomp", Requirement(seccomp=True)), ("uid-drop,landlock-v6,seccomp", Requirement(True, 6, True)),
])
def test_parse(text, requirement):
    assert Requirement.parse(text) == requirement
    assert Requirement.parse(str(requirement)) == requirement


LEVELS = ("rlimits", "uid-drop", "landlock", "landlock-v6", "landlock-v7", "uid-drop,landlock-v6",
          "uid-drop,landlock-v7", "landlock-v8", "seccomp", "uid-drop,landlock-v7,seccomp")


@pytest.mark.parametrize("achieved, met", [
    (ROOT_LANDLOCK, set(LEVELS) - {"landlock-v8"}),
    (("rlimits", "landlock-v6"), {"rlimits", "landlock", "landlock-v6"}),
    (("rlimits", "uid-drop", "landlock-v7"), set(LEVELS) - {"landlock-v8", "seccomp", "uid-drop,landlock-v7,seccomp"}),
    (("rlimits", "uid-drop"), {"rlimits", "uid-drop"}),
    (("rlimits",), {"rlimits"}),
    ((), set()),
])
def test_a_level_meets_what_it_has(achieved, met):
    assert {text for text in LEVELS if Requirement.parse(text).met_by(achieved)} == met


@pytest.mark.parametrize("text, message", [("", "needs a level"), ("namespaces", "'namespaces' is not an isolation"),
                                           ("landlock-6", "is not an isolation mechanism"),
                                           ("uid-drop,pid-namespace", "'pid-namespace' is part of each submission's"),
                                           ("seccomp,ipc-namespace", "'ipc-namespace' is part of each submission's"),
                                           ("mount-namespace", "'mount-namespace' is part of each submission's")])
def test_bad_levels_name_the_right_ones(text, message):
    with pytest.raises(UsageError, match=message):
        Requirement.parse(text)


def test_the_prediction_is_what_a_sandbox_reports(correct):
    """The level a worker announces before grading is the one its sandboxes then reach (the
    container aside: it is made per submission, and recorded in each result)."""
    assert predicted() == announced(correct.isolation)


def test_grade_on_one_machine_refuses_a_level_it_cannot_reach(tmp_path):
    """--require-isolation on one machine: refused before anything is graded, saying what it reaches."""
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.py").write_text(REFERENCE.read_text())
    command = [sys.executable, "-m", "grader", "grade", str(folder), "--assignment", str(ASSIGNMENT), "--out",
               str(tmp_path / "out"), "-j", "1", "--require-isolation"]
    done = subprocess.run([*command, "landlock-v99"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "--require-isolation rlimits,landlock-v99: this machine's sandboxes reach" \
        in done.stderr, done.stderr
    assert not (tmp_path / "out" / "results").exists()
    done = subprocess.run([*command, ",".join(predicted())], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
