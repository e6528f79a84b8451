"""A zygote started ahead of its submission (``Sandbox.prestart``, what ``--watch`` does between
saves): it serves the next job, and one that died or was made for other limits is replaced, with
nothing of it left behind. Real processes throughout.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from own_processes import wait_until

from grader import commands, load_assignment
from grader.sandbox import proctree
from grader.sandbox.launcher import End, Sandbox

MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture(scope="module")
def mini():
    return load_assignment(MINI)


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        for child in proctree.children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _check_one(box: Sandbox, mini) -> None:
    """The submission imports in ``box`` and a public scenario passes there."""
    index, program = next((at, s) for at, s in enumerate(mini.select("public")) if s.id == "fresh_state")
    box.begin(MINI / "squares.py", "squares", commands.job(mini), source=(MINI / "squares.py").read_bytes())
    assert box.runs.wait_ready(mini.limits.import_time).ok
    (_, outcome), = box.runs.run_all([(index, 5.0, commands.run(index, program, {}))])
    assert outcome.has_result and outcome.error is None and outcome.observations == {"calls": 0}


def _waiting_zygote(box: Sandbox) -> int:
    """The pid of the zygote ``prestart`` began, once the warden has reported it."""
    zygote = box.zygote
    assert zygote is not None
    assert box.pump(lambda: zygote.pid is not None, time.monotonic() + 10.0), "the warden never reported it"
    assert zygote.pid is not None
    return zygote.pid


def test_the_prestarted_zygote_is_the_one_that_serves_the_next_job(mini):
    with Sandbox() as box:
        _check_one(box, mini)
        box.end(End.SUBMISSION)
        box.prestart(commands.job(mini))
        waiting = _waiting_zygote(box)
        _check_one(box, mini)
        assert box.zygote is not None and box.zygote.pid == waiting, "the job went to the zygote started ahead of it"


def test_a_prestarted_zygote_that_died_while_waiting_is_replaced(mini):
    with Sandbox() as box:
        box.prestart(commands.job(mini))
        waiting = _waiting_zygote(box)
        killed = _descendants(box.process.pid)      # the zygote and whatever contains it
        for pid in killed:
            os.kill(pid, signal.SIGKILL)
        # Reaped (the warden waits for them, and reports it), they leave /proc.
        assert wait_until(lambda: not any(Path(f"/proc/{pid}").exists() for pid in killed))
        _check_one(box, mini)
        assert box.zygote is not None and box.zygote.pid != waiting


def test_a_prestart_for_other_limits_is_replaced_and_leaves_no_folder(mini):
    with Sandbox() as box:
        box.prestart({**commands.job(mini), "memory_mb": commands.job(mini)["memory_mb"] + 64})
        waiting = box.job_dir
        assert waiting is not None and waiting.is_dir()
        _check_one(box, mini)
        assert not waiting.exists(), "the prestarted zygote's folder went with it"
        serving = box.job_dir
        box.end(End.SUBMISSION)
        box.prestart(commands.job(mini))
        last, warden = box.job_dir, box.process.pid
    assert serving is not None and not serving.exists()
    assert last is not None and last != serving and not last.exists()
    assert not proctree.running(warden) and not _descendants(warden)


def test_a_job_folder_is_gone_with_its_container_before_the_grader_hears_of_it(mini):
    # The warden removes it: a grader killed between the warden's report and its own clean-up
    # (SIGKILL in the middle of a batch) leaves no copy of a submission in the temp folder.
    with Sandbox() as box:
        _check_one(box, mini)
        zygote, folder = box.zygote, box.job_dir
        assert zygote is not None and folder is not None and folder.is_dir()
        # The submission is in the zygote's own tmpfs where it has a mount namespace, else in the folder.
        assert ("mount-namespace" in box.isolation) != (folder / "squares.py").exists()
        box.end(End.KILL)
        assert box.pump(lambda: zygote.ended is not None, time.monotonic() + 10.0), "no report of its end"
        assert not folder.exists()
