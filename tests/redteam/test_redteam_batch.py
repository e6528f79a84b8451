"""Hostile submissions in one ``grader grade`` batch with honest ones: the honest ones get exactly
the results they get when graded alone, the hostile ones nothing, and the output folder holds only
what the grader wrote (the attacks aim at it: ``@OUT@`` is the batch's own output folder)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess

import jsonschema
import pytest

from .attacks import BY_ID, ROOT
from .conftest import ASSIGNMENT, CANARY_TEXT, GRADER, HIDDEN, REFERENCE, sandbox_processes

SCHEMA = json.loads((ROOT / "grader" / "schema" / "result.schema.json").read_text())
# The attacks most likely to reach a neighbour: the shared output folder, signals, strays, shadow files.
HOSTILE = ("files_in_output_folder", "atexit_forgery", "kill_process_groups", "kill_everything", "kill_parents",
           "fork_burst_setsid", "thread_after_return", "memory_bomb", "read_solution", "stdlib_shadow_files",
           "endless_threads", "output_200_mb", "result_pipe_frames")


def _verdicts(result: dict) -> dict:
    return {s["id"]: (s["status"], s["points"]) for s in result["scenarios"]}


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> dict:
    """The reference and one buggy fixture (made from the reference by tests/fixtures/make_buggy.py)."""
    spec = importlib.util.spec_from_file_location("make_buggy", ROOT / "tests" / "fixtures" / "make_buggy.py")
    make_buggy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_buggy)
    buggy = tmp_path_factory.mktemp("honest") / "detach_returns_self.py"
    buggy.write_text(make_buggy.buggy_source("detach_returns_self"))
    return {"reference": REFERENCE, "buggy": buggy}


@pytest.fixture(scope="module")
def batch(arena, honest, tmp_path_factory):
    if subprocess.run([GRADER, "grade", "--help"], capture_output=True).returncode != 0:
        pytest.skip("grader grade is not available")
    base = tmp_path_factory.mktemp("batch")
    submissions, out = base / "submissions", base / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)   # world-writable: only the sandbox keeps the attacks out
    for attack_id in HOSTILE:
        arena.submission(BY_ID[attack_id], submissions / attack_id, out=out)
    for student, source in honest.items():
        (submissions / student).mkdir(parents=True)
        shutil.copy(source, submissions / student / "autodiff.py")
    env = {**os.environ, "GRADER_SANDBOX_UID_BASE": "62200"}
    command = [GRADER, "grade", str(submissions), "--assignment", str(ASSIGNMENT), "--solutions", str(HIDDEN),
               "--out", str(out), "--seed", "1", "-j", "2"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    return done, out


@pytest.fixture(scope="module")
def alone(honest):
    """The honest submissions graded one by one, outside any batch."""
    from grader import grade_submission, load_assignment
    assignment = load_assignment(ASSIGNMENT, hidden=HIDDEN)
    return {student: grade_submission(path, assignment, seed=1, scope="all").to_dict()
            for student, path in honest.items()}


def test_the_batch_completes(batch):
    done, out = batch
    assert done.returncode == 0, done.stderr


def test_honest_neighbours_get_exactly_their_normal_results(batch, alone):
    _, out = batch
    for student, expected in alone.items():
        got = json.loads((out / "results" / f"{student}.json").read_text())
        jsonschema.validate(got, SCHEMA)
        assert (got["score"], got["max_score"]) == (expected["score"], expected["max_score"])
        assert _verdicts(got) == _verdicts(expected)
    assert alone["reference"]["score"] == alone["reference"]["max_score"]


def test_hostile_submissions_earn_nothing_in_a_batch(batch):
    _, out = batch
    for attack_id in HOSTILE:
        result = json.loads((out / "results" / f"{attack_id}.json").read_text())
        jsonschema.validate(result, SCHEMA)
        assert result["score"] == 0, attack_id
        assert not [s for s in result["scenarios"] if s["task"] in ("detach", "tape") and s["status"] == "passed"]


def test_the_output_folder_holds_only_what_the_grader_wrote(batch, arena):
    _, out = batch
    assert sorted(p.name for p in (out / "results").iterdir()) == sorted(
        f"{student}.json" for student in (*HOSTILE, "reference", "buggy"))
    assert not list(out.glob("forged-*")) and not (out / "results.json").exists()
    rows = {line.split(",")[0]: line for line in (out / "gradebook.csv").read_text().splitlines()[1:]}
    assert set(rows) >= {"reference", "buggy", *HOSTILE}
    assert arena.canary.read_text() == CANARY_TEXT
    assert sandbox_processes(62200, 62300) == []
