"""Hostile submissions in one ``grader grade`` batch with honest ones graded before and after them:
the honest ones get exactly the results they get when graded alone, the hostile ones nothing, the
output folder holds only what the grader wrote (the attacks aim at it: ``@OUT@`` is the batch's own
output folder), every report is written, no listener on loopback or on a Unix socket hears
anything, and once the grader has exited nothing of the batch is left: no process of a sandbox
user, no IPC object, no shared memory, no byte in the temp folder, and a later ``grader check``
shows nothing of the batch's hidden scenarios."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema
import pytest

from .attacks import BY_ID, KERNEL_OBJECTS, ROOT
from .conftest import ASSIGNMENT, CANARY_TEXT, GRADER, HIDDEN, REFERENCE, sandbox_processes
from .traces import filled, hidden_in, left_behind, printed, traces

SCHEMA = json.loads((ROOT / "grader" / "schema" / "result.schema.json").read_text())
UID_BASE = 62200
# The attacks most likely to reach a neighbour: the shared output folder, signals, strays that
# outlive their submission (forging frames, copying pipes), floods, a full process table, files
# no cleanup can remove, text no writer can write.
HOSTILE = ("files_in_output_folder", "atexit_forgery", "kill_process_groups", "kill_everything", "kill_parents",
           "fork_burst_setsid", "thread_after_return", "memory_bomb", "read_solution", "stdlib_shadow_files",
           "endless_threads", "output_200_mb", "result_pipe_frames", "zombie_leader_strays", "nproc_hog",
           "sockets_everywhere", "flood_huge_forbidden", "flood_tiny_messages", "forged_huge_results",
           "lone_surrogates", "deep_folders", *(attack.id for attack in KERNEL_OBJECTS))
# Honest neighbours: one sorts before every attacker, the others after them, each graded in a
# sandbox they used.
NEIGHBOURS = ("aa_reference", "zz_buggy", "zz_reference", "zz_reference_again")
UIDS = range(UID_BASE, UID_BASE + 100)
STRAY_MARKS = ("STOLEN-BY-", "STRAY-OF-", "torch")


def _verdicts(result: dict) -> dict:
    return {s["id"]: (s["status"], s["points"]) for s in result["scenarios"]}


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> dict:
    """The reference (twice) and one buggy fixture (made from the reference by tests/fixtures/make_buggy.py)."""
    spec = importlib.util.spec_from_file_location("make_buggy", ROOT / "tests" / "fixtures" / "make_buggy.py")
    make_buggy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_buggy)
    buggy = tmp_path_factory.mktemp("honest") / "detach_returns_self.py"
    buggy.write_text(make_buggy.buggy_source("detach_returns_self"))
    return {"aa_reference": REFERENCE, "zz_buggy": buggy, "zz_reference": REFERENCE, "zz_reference_again": REFERENCE}


# `grader` as its console script runs it (-I: no working folder on sys.path), saying its own peak RSS.
_OWN_PEAK = ("import atexit, resource, sys\n"
             "atexit.register(lambda: sys.stderr.write("
             "f'PEAK_RSS_KB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n'))\n"
             "from grader.entry import main\n"
             "sys.argv[0] = 'grader'\n"
             "main()\n")


@pytest.fixture(scope="module")
def batch(arena, honest, tmp_path_factory):
    if subprocess.run([GRADER, "grade", "--help"], capture_output=True).returncode != 0:
        pytest.skip("grader grade is not available")
    base = tmp_path_factory.mktemp("batch")
    submissions, out = base / "submissions", base / "out"
    out.mkdir(mode=0o777)
    out.chmod(0o777)   # world-writable: only the sandbox keeps the attacks out
    jobs = Path(tempfile.mkdtemp(prefix="redteam-jobs-"))   # the job folders, to see that none is left
    jobs.chmod(0o755)
    for attack_id in HOSTILE:
        arena.submission(BY_ID[attack_id], submissions / attack_id, out=out)
    for student, source in honest.items():
        (submissions / student).mkdir(parents=True)
        shutil.copy(source, submissions / student / "autodiff.py")
    env = {**os.environ, "GRADER_SANDBOX_UID_BASE": str(UID_BASE), "TMPDIR": str(jobs)}
    before = traces(UIDS, jobs)
    began = time.monotonic()
    command = [sys.executable, "-I", "-c", _OWN_PEAK, "grade", str(submissions), "--assignment", str(ASSIGNMENT),
               "--solutions", str(HIDDEN),
               "--out", str(out), "--seed", "1", "-j", "2", "--format", "gradescope",
               "--junit", str(base / "junit.xml")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    seconds = time.monotonic() - began
    # The grader's own peak: the test's RUSAGE_CHILDREN would count the largest process of any
    # generation reaped below it, which here includes a sandbox that fills its memory limit.
    peak_kb = next((int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("PEAK_RSS_KB ")), None)
    left = sandbox_processes(UID_BASE, UID_BASE + 100)   # the grader has exited: nothing of it may run on
    yield {"done": done, "out": out, "junit": base / "junit.xml", "jobs": sorted(os.listdir(jobs)),
           "seconds": seconds, "peak_kb": peak_kb, "left": left, "traces": left_behind(before, UIDS, jobs),
           "submissions": submissions, "env": env}
    shutil.rmtree(jobs, ignore_errors=True)


@pytest.fixture(scope="module")
def alone(honest):
    """The honest submissions graded one by one, outside any batch."""
    from grader import grade_submission, load_assignment
    assignment = load_assignment(ASSIGNMENT, hidden=HIDDEN)
    return {student: grade_submission(path, assignment, seed=1, scope="all").to_dict()
            for student, path in honest.items()}


def test_the_batch_completes_with_every_report(batch):
    done, out = batch["done"], batch["out"]
    # 1: some submissions "could not be graded" (an attacker's own error), never a crash of ours (3)
    assert done.returncode in (0, 1) and "Error:" not in done.stderr, done.stderr
    assert (out / "gradebook.csv").is_file() and (out / "summary.json").is_file()
    assert len(list((out / "gradescope").glob("*.json"))) == len(HOSTILE) + len(NEIGHBOURS)
    batch["junit"].read_text(encoding="utf-8")   # strict UTF-8: no lone surrogate got through


def test_honest_neighbours_get_exactly_their_normal_results(batch, alone):
    out = batch["out"]
    for student, expected in alone.items():
        got = json.loads((out / "results" / f"{student}.json").read_text())
        jsonschema.validate(got, SCHEMA)
        assert (got["score"], got["max_score"], got["error"]) == (expected["score"], expected["max_score"], None)
        assert _verdicts(got) == _verdicts(expected)
        shown = got["import_stdout"] + got["import_stderr"] + "".join(
            s["feedback"]["stdout"] + s["feedback"]["stderr"] for s in got["scenarios"])
        assert not [mark for mark in STRAY_MARKS if mark in shown], f"{student} saw an attacker's output"
    assert alone["zz_reference"]["score"] == alone["zz_reference"]["max_score"]


def test_hostile_submissions_earn_nothing_in_a_batch(batch):
    out = batch["out"]
    for attack_id in HOSTILE:
        result = json.loads((out / "results" / f"{attack_id}.json").read_text())
        jsonschema.validate(result, SCHEMA)
        assert result["score"] == 0, attack_id
        assert not [s for s in result["scenarios"] if s["task"] in ("detach", "tape") and s["status"] == "passed"]
        assert (out / "results" / f"{attack_id}.json").stat().st_size < 2_000_000, attack_id


def test_the_output_folder_holds_only_what_the_grader_wrote(batch, arena):
    out = batch["out"]
    assert sorted(p.name for p in (out / "results").iterdir()) == sorted(
        f"{student}.json" for student in (*HOSTILE, *NEIGHBOURS))
    assert not list(out.glob("forged-*")) and not (out / "results.json").exists()
    rows = {line.split(",")[0]: line for line in (out / "gradebook.csv").read_text().splitlines()[1:]}
    assert set(rows) >= {*NEIGHBOURS, *HOSTILE}
    assert arena.canary.read_text() == CANARY_TEXT


def test_nothing_outlives_the_grader(batch):
    assert batch["left"] == [], "processes of the batch's sandbox users outlived the grader"
    assert batch["jobs"] == [], "job folders were left behind"


def test_no_kernel_object_shared_memory_or_byte_outlives_the_grader(batch):
    # 2.4 GB of detached segments, queues holding the hidden programs, 300 semaphore sets a run,
    # memfds past the memory limit and a job folder filled for a whole time limit: all gone with
    # their containers (ipcs as before, Shmem back, the temp folder empty).
    assert batch["traces"] == [], batch["traces"]


def _result(batch, attack_id: str) -> dict:
    return json.loads((batch["out"] / "results" / f"{attack_id}.json").read_text())


def test_kernel_objects_stay_in_their_container(batch):
    made = _result(batch, "shared_memory_left")
    assert {"ipc-namespace", "mount-namespace", "memory-limit"} <= set(made["isolation"]), made["isolation"]
    # In an IPC namespace of its own, under the memory limit, the segments are made (and removed
    # with it), and no other submission's is visible.
    assert "MADE-SEGMENTS 3" in made["import_stdout"] and "FOUND-SEGMENTS []" in made["import_stdout"]
    assert "FLOOD 300 semaphore sets 300 queues" in _result(batch, "semaphore_flood")["import_stdout"]
    dropped = _result(batch, "message_queue_drop_box")["import_stdout"]
    assert "refused mq_open" in dropped and "DROPBOX []" in dropped, dropped   # mq: RLIMIT_MSGQUEUE is 0
    assert "memfd stopped PermissionError 1" in _result(batch, "memfd_beyond_the_limit")["import_stdout"]
    others = printed(_result(batch, "limits_of_other_processes"))
    assert "refused prlimit 1" in others and "CHANGED" not in others, others


def test_the_job_folder_is_bounded_in_bytes_and_in_files(batch):
    from grader.sandbox.isolation import JOB_FOLDER_FILES, JOB_FOLDER_MB
    mib, files, errors = filled(_result(batch, "disk_and_inode_filling"))
    assert mib <= JOB_FOLDER_MB and files <= JOB_FOLDER_FILES and "{28:" in errors, (mib, files, errors)  # ENOSPC


@pytest.mark.parametrize("attack_id", ["message_queue_drop_box", "job_pipe_reader_thread", "shared_memory_left"])
def test_a_later_check_shows_nothing_of_the_batchs_hidden_scenarios(batch, attack_id):
    # The same file checked again by a student (public scenarios only), with the batch's sandbox
    # uids: whatever its run kept at its fixed keys, or in segments of its uid, would show here.
    done = subprocess.run([GRADER, "check", "autodiff.py", "--assignment", str(ASSIGNMENT), "--json", "--seed", "1"],
                          cwd=batch["submissions"] / attack_id, capture_output=True, text=True, timeout=120,
                          env=batch["env"])
    assert done.returncode == 1, done.stderr
    shown = json.dumps(json.loads(done.stdout))
    assert not hidden_in(shown), shown[:3000]
    assert "SEGMENT-OF-" not in shown


def test_no_listener_heard_anything(batch, arena):
    assert arena.connections == []


def test_floods_cost_the_grader_little(batch):
    # 390,000 tiny messages once took 13 minutes of the grader's CPU; 4 MB messages grew it to a
    # MemoryError. The whole batch, 24 submissions, stays within bounded time and memory.
    assert batch["seconds"] < 300
    assert batch["peak_kb"] is not None and batch["peak_kb"] < 400_000, batch["peak_kb"]
