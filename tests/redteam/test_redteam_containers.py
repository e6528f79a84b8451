"""One submission, one container: nothing of a submission outlives it or reaches the next one.

What these pin down, each an attack that worked before containers (issue 13): a submission that
scans its own memory for what the one before it left there; two graders on one machine taking the
same sandbox user; processes a grader that died left behind, holding the sandbox user's process
slots; and a submission rewriting the grader's cache of parsed specs from the weakest level.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .attacks import BY_ID, STUB, Attack
from .conftest import ASSIGNMENT, GRADER, HIDDEN, REFERENCE, sandbox_processes

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="sandbox users need root (CI runs as root)")


def test_no_byte_of_the_previous_submission_is_in_the_next_ones_memory(arena, tmp_path):
    # The warden once parsed each job (the submission's compiled code) before forking its zygote:
    # the freed bytes stayed in its heap, and a stub that scanned its memory adopted the engine
    # of the submission graded before it. Now no job ever enters the warden.
    from grader import grade_submission, load_assignment
    from grader.sandbox.launcher import Sandbox
    assignment = load_assignment(ASSIGNMENT, hidden=HIDDEN)
    scanner = arena.submission(BY_ID["heap_remnants"], tmp_path / "scanner")
    with Sandbox() as box:
        for _ in range(2):
            reference = grade_submission(REFERENCE, assignment, seed=1, scope="all", sandbox=box)
            stolen = grade_submission(scanner, assignment, seed=1, scope="all", sandbox=box)
            assert reference.score == reference.max_score
            assert "code objects found in memory:" in stolen.import_stdout, stolen.import_stdout  # it did scan
            assert stolen.score == 0 and "ADOPTED" not in stolen.import_stdout, stolen.import_stdout


HOLDER = Attack("hold_process_slots", "containers", "import", """
    import os, time
    if time.time() < @UNTIL@:   # its first import only: each restart after a crash would hold them again
        for _ in range(200):    # every process slot of this sandbox user...
            try:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
            except OSError:
                break
        time.sleep(8)           # ...held while another grader works
    """)


def _check_reference(tmp_path: Path, base: int) -> dict:
    folder = tmp_path / f"check-{base}"
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "autodiff.py")
    done = subprocess.run([GRADER, "check", "autodiff.py", "--assignment", str(ASSIGNMENT), "--json", "--seed", "1"],
                          cwd=folder, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GRADER_SANDBOX_UID_BASE": str(base)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    return json.loads(done.stdout)


def _wait_for_processes(low: int, high: int, count: int, seconds: float) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = len(sandbox_processes(low, high))
        if found >= count:
            return found
        time.sleep(0.1)
    return len(sandbox_processes(low, high))


def test_two_graders_on_one_machine_never_share_a_sandbox_user(arena, tmp_path):
    # Both graders use the same GRADER_SANDBOX_UID_BASE, as two instructors (or a CI runner's two
    # jobs) would. While the first one's submission holds every process slot of its sandbox user,
    # the second one's check of the reference must not notice: its sandbox user is another.
    base = 62400
    submissions = tmp_path / "submissions"
    (submissions / "holder").mkdir(parents=True)
    (submissions / "holder" / "autodiff.py").write_text(HOLDER.source({"UNTIL": str(time.time() + 15)}))
    batch = subprocess.Popen([GRADER, "grade", str(submissions), "--assignment", str(ASSIGNMENT), "--solutions",
                              str(HIDDEN), "--out", str(tmp_path / "out"), "--seed", "1", "-j", "1"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env={**os.environ, "GRADER_SANDBOX_UID_BASE": str(base)})
    try:
        assert _wait_for_processes(base, base + 50, 40, 30) >= 40, "the holder never held the slots"
        result = _check_reference(tmp_path, base)
        assert result["score"] == result["max_score"] > 0
        assert all(s["status"] == "passed" for s in result["scenarios"])
        _, stderr = batch.communicate(timeout=120)
    finally:
        if batch.poll() is None:
            batch.kill()   # its warden sees the grader gone and ends everything below it
            batch.wait()
    assert batch.returncode == 0, stderr
    assert sandbox_processes(base, base + 50) == []


def test_what_a_dead_grader_left_is_killed_before_the_next_run(tmp_path):
    # A grader killed with its warden may leave processes of its sandbox user behind (where there
    # are no PID namespaces to end them): they hold that user's process slots. The next grader to
    # take the user kills every process of it before its first zygote.
    base = 62500
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None or shutil.which("setpriv") is None:
        pytest.skip("needs /usr/bin/python3 and setpriv to make the leftovers")
    leftovers = ("import os, time\n"
                 "for _ in range(80):\n"
                 "    if os.fork() == 0:\n"
                 "        os.setsid()\n"
                 "        time.sleep(120)\n"
                 "        os._exit(0)\n")
    subprocess.run(["setpriv", f"--reuid={base}", f"--regid={base}", "--clear-groups", python, "-c", leftovers],
                   check=True, cwd="/", timeout=30)
    assert _wait_for_processes(base, base + 1, 60, 10) >= 60
    result = _check_reference(tmp_path, base)
    assert result["score"] == result["max_score"] > 0
    assert sandbox_processes(base, base + 1) == [], "the leftovers are still there"


# The spec cache: without Landlock (as root at the rlimits-only level, or an ordinary user on a kernel
# without it) a submission can rewrite the grader's cache of parsed specs. Grading must not trust it.
POISON_POINTS = Attack("poison_spec_cache_points", "containers", "import", """
    import glob, json
    for path in glob.glob("@CACHE@/spec-*.json"):
        with open(path) as handle:
            entry = json.load(handle)
        scenarios = entry["value"]["mapping"].get("scenarios")
        if scenarios:   # every point to the engine scenarios, which the untouched stub passes
            for item in scenarios["list"]:
                fields = item["mapping"]
                fields["points"] = 10 if str(fields.get("id", "")).startswith("engine_") else 0
            with open(path, "w") as handle:
                json.dump(entry, handle)
            print("POISONED", path)
    """)
POISON_DEPTH = Attack("poison_spec_cache_depth", "containers", "import", """
    import glob, json
    for path in glob.glob("@CACHE@/spec-*.json"):
        with open(path) as handle:
            entry = json.load(handle)
        body = json.dumps({k: v for k, v in entry.items() if k != "value"})[:-1]
        with open(path, "w") as handle:   # a value nested 200,000 deep: RecursionError for its reader
            handle.write(body + ', "value": ' + "[" * 200_000 + "]" * 200_000 + "}")
        print("POISONED", path)
    """)


def _cli(tmp_path: Path, command: str, submission: Path, cache: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GRADER_CACHE_DIR": str(cache), "GRADER_SANDBOX_UID_BASE": "62600"}
    arguments = [GRADER, command, str(submission), "--assignment", str(ASSIGNMENT), "--seed", "1", *extra]
    return subprocess.run(arguments, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("poison", [POISON_POINTS, POISON_DEPTH], ids=lambda attack: attack.id)
def test_a_poisoned_spec_cache_changes_no_grade(arena, tmp_path, poison):
    from grader import grade_submission, load_assignment
    from grader.sandbox.isolation import IsolationPlan
    from grader.sandbox.launcher import Sandbox
    cache = tmp_path / "cache"
    cache.mkdir()
    reference = tmp_path / "reference" / "autodiff.py"
    reference.parent.mkdir()
    shutil.copy(REFERENCE, reference)
    assert _cli(tmp_path, "check", reference, cache).returncode == 0   # fills the cache, as a check does
    assert list(cache.glob("spec-*.json"))
    places = {**arena.places(poison), "CACHE": str(cache)}
    attacker = tmp_path / "attacker" / "autodiff.py"
    attacker.parent.mkdir()
    attacker.write_text(poison.source(places))
    assignment = load_assignment(ASSIGNMENT, hidden=HIDDEN)
    with Sandbox(plan=IsolationPlan(uid=None, landlock_abi=0, nproc=None)) as weakest:  # nothing keeps it out
        poisoned = grade_submission(attacker, assignment, seed=1, scope="all", sandbox=weakest)
    assert "POISONED" in poisoned.import_stdout, poisoned.import_stdout   # it really rewrote the cache
    stub = tmp_path / "class" / "stub" / "autodiff.py"
    stub.parent.mkdir(parents=True)
    shutil.copy(STUB, stub)
    # Grading never reads the cache: the library and `grade` give the untouched stub nothing.
    assert grade_submission(stub, load_assignment(ASSIGNMENT, hidden=HIDDEN), seed=1, scope="all").score == 0
    out = tmp_path / "out"
    graded = _cli(tmp_path, "grade", stub.parent.parent, cache, "--solutions", str(HIDDEN), "--out", str(out))
    assert graded.returncode in (0, 1) and "Error:" not in graded.stderr, graded.stderr
    assert json.loads((out / "results" / "stub.json").read_text())["score"] == 0
    # And a check that meets an entry it cannot read takes it for a miss: no internal error.
    checked = _cli(tmp_path, "check", reference, cache, "--json")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr
    assert json.loads(checked.stdout)["score"] == json.loads(checked.stdout)["max_score"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
