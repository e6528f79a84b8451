"""Each isolation level reports what it achieved, and the weaker levels' gaps are real (docs/security.md).

The reference solution is world-readable in this repository, so only Landlock keeps a sandbox from
reading it: with a uid drop alone, or with rlimits alone, the read_solution attack gets through.
Likewise a System V queue or segment at a fixed key carries what one run kept to the next, unless
a container (an IPC namespace, seccomp, or the sandbox uid's objects removed) stands between them.
These tests pin that down, so the threat model stays honest.
"""

from __future__ import annotations

import os

import pytest

from grader.sandbox.isolation import NPROC_HEADROOM, IsolationPlan, plan_isolation
from grader.sandbox.landlock import abi_version

from .attacks import BY_ID
from .conftest import ASSIGNMENT, HIDDEN, REFERENCE, sandbox_processes
from .traces import SHMEM_SLACK_KB, hidden_in, ipc_objects, remove_keyed, shmem_grown_kb, traces

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="the levels are compared as root (CI)")


def _grade(arena, attack_id, plan, tmp_path):
    from grader import grade_submission, load_assignment
    from grader.sandbox.launcher import Sandbox
    path = arena.submission(BY_ID[attack_id], tmp_path)
    with Sandbox(plan=plan) as sandbox:  # the caller owns a sandbox it passes in
        return grade_submission(path, load_assignment(ASSIGNMENT), seed=1, sandbox=sandbox)


def test_the_strongest_plan_as_root_is_uid_drop_and_landlock():
    plan = plan_isolation(slot=3)
    assert plan.uid is not None and plan.uid % 1000 == 3 and plan.nproc == NPROC_HEADROOM
    assert plan.landlock_abi == abi_version() >= 1


@pytest.mark.parametrize("plan, reported, stolen", [
    (IsolationPlan(uid=62250, landlock_abi=abi_version(), nproc=NPROC_HEADROOM), ("rlimits", "uid-drop"), False),
    (IsolationPlan(uid=62250, landlock_abi=0, nproc=NPROC_HEADROOM), ("rlimits", "uid-drop"), True),
    (IsolationPlan(uid=None, landlock_abi=0, nproc=None), ("rlimits",), True),
], ids=["uid-drop+landlock", "uid-drop-only", "rlimits-only"])
def test_each_level_reports_itself_and_only_landlock_keeps_world_readable_files(arena, tmp_path, plan, reported,
                                                                                 stolen):
    assert os.stat(REFERENCE).st_mode & 0o004, "this test needs a world-readable reference solution"
    result = _grade(arena, "read_solution", plan, tmp_path)
    assert result.isolation[:2] == reported
    assert any(level.startswith("landlock-v") for level in result.isolation) == bool(plan.landlock_abi)
    assert (result.score > 0) is stolen


def _plan(**layers) -> IsolationPlan:
    return IsolationPlan(uid=62260, landlock_abi=abi_version(), nproc=NPROC_HEADROOM, **layers)


# Where the machine refuses a layer (Docker's seccomp profile refuses unshare; its /sys/fs/cgroup is
# read-only), the next one holds: strays whose leader thread has exited still die with their
# submission, and the neighbour after them in the same warm sandbox gets its own results.
@pytest.mark.parametrize("plan, container", [
    (_plan(namespaces=True, seccomp=True, cgroups=True), {"pid-namespace", "net-namespace", "seccomp"}),
    (_plan(namespaces=False, seccomp=True, cgroups=True), {"seccomp"}),
    (_plan(namespaces=False, seccomp=False, cgroups=False), set()),
], ids=["namespaces+cgroup", "cgroup-only", "sandbox-uid-only"])
def test_every_container_keeps_strays_from_the_next_submission(arena, tmp_path, plan, container):
    from grader import grade_submission, load_assignment
    from grader.sandbox.launcher import Sandbox
    assignment = load_assignment(ASSIGNMENT)
    strays = arena.submission(BY_ID["zombie_leader_strays"], tmp_path / "strays")
    with Sandbox(plan=plan) as sandbox:
        hostile = grade_submission(strays, assignment, seed=1, sandbox=sandbox)
        assert container <= set(hostile.isolation), hostile.isolation
        assert ("pid-namespace" in hostile.isolation) == plan.namespaces
        honest = grade_submission(REFERENCE, assignment, seed=1, sandbox=sandbox)
        assert sandbox_processes(62260, 62261) == [], "strays outlived their submission"
    assert honest.score == honest.max_score and honest.error is None
    assert "STRAY" not in honest.import_stdout + "".join(s.feedback.stdout for s in honest.scenarios)
    assert sandbox_processes(62260, 62261) == []


# The same for System V IPC: whatever the machine refuses, a submission's objects are gone before
# the next submission starts in the same warm sandbox (its own IPC namespace, removed by the warden;
# seccomp refusing the calls; or, with neither, the sandbox uid's objects removed by the warden).
@pytest.mark.parametrize("plan, made", [
    (_plan(namespaces=True, seccomp=False, cgroups=True), True),
    (_plan(namespaces=False, seccomp=True, cgroups=True), False),
    (_plan(namespaces=False, seccomp=False, cgroups=False), True),
], ids=["ipc-namespace-without-seccomp", "seccomp-without-namespace", "sandbox-uid-only"])
def test_every_container_removes_ipc_objects_before_the_next_submission(arena, tmp_path, plan, made):
    from grader import grade_submission, load_assignment
    from grader.sandbox.launcher import Sandbox
    assignment = load_assignment(ASSIGNMENT)
    segments = arena.submission(BY_ID["shared_memory_left"], tmp_path / "segments")
    uids = range(62260, 62261)
    before = traces(uids, tmp_path)
    with Sandbox(plan=plan) as sandbox:
        for _ in range(2):
            result = grade_submission(segments, assignment, seed=1, sandbox=sandbox)
            assert ("MADE-SEGMENTS 3" in result.import_stdout) is made, result.import_stdout
            assert ("ipc-namespace" in result.isolation) is plan.namespaces
            assert "SEGMENT-OF-" not in result.import_stdout, "a segment of the one before was found"
            assert ipc_objects(uids) == frozenset(), "objects outlived their container"
            # Their 600 MiB are free as soon as the warden says the container is empty, before the next.
            assert shmem_grown_kb(before, uids) < SHMEM_SLACK_KB


@pytest.mark.parametrize("attack_id", ["message_queue_drop_box", "job_pipe_reader_thread"])
def test_without_any_container_a_later_run_reads_what_an_earlier_one_kept(arena, tmp_path, attack_id):
    # The attacks are real: as root with no sandbox uid, namespace or seccomp, a public run prints
    # what the run before it (all scenarios) kept at the fixed key: the hidden programs.
    from grader import grade_submission, load_assignment
    from grader.sandbox.launcher import Sandbox
    weakest = IsolationPlan(uid=None, landlock_abi=0, nproc=None)
    path = arena.submission(BY_ID[attack_id], tmp_path)
    try:
        with Sandbox(plan=weakest) as sandbox:
            grade_submission(path, load_assignment(ASSIGNMENT, hidden=HIDDEN), seed=1, scope="all", sandbox=sandbox)
            later = grade_submission(path, load_assignment(ASSIGNMENT), seed=1, sandbox=sandbox)
    finally:
        remove_keyed()
    assert hidden_in(later.import_stdout), later.import_stdout[:2000]
