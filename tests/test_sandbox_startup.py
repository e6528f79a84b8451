"""A sandbox's start, which every ``grader check`` waits for: the warden spawned before the grader
imports anything heavy, moved into its memory cgroup while it imports numpy, and its garbage
collector as a student expects it in every scenario. Real processes throughout.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from made_assignments import scenario_assignment

from grader import commands, load_assignment
from grader.sandbox.launcher import Sandbox

MINI = Path(__file__).parent / "fixtures" / "mini"


@pytest.fixture(scope="module")
def mini():
    return load_assignment(MINI)


def test_the_console_script_reaches_the_warden_spawn_without_heavy_imports():
    # What entry.py imports before it spawns the warden: each module here would delay the warden's
    # own numpy import, which a check waits for (benchmarks/README.md says what typing cost).
    probe = ("import sys\nbefore = set(sys.modules)\nimport grader.entry, grader.sandbox.spawn\n"
             "print(' '.join(sorted(set(sys.modules) - before)))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.split()
    for heavy in ("typing", "re", "json", "enum", "collections", "pathlib", "dataclasses", "numpy", "click"):
        assert heavy not in loaded, f"{heavy} is imported on the way to the warden: {loaded}"


def _cgroup_of(pid: int, controller: str) -> str:
    with open(f"/proc/{pid}/cgroup") as handle:
        for line in handle:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controller in controllers.split(","):
                return path
    return ""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (cgroups)")
def test_the_warden_is_moved_into_its_memory_cgroup_before_its_first_zygote(mini):
    with Sandbox() as box:
        move = box._cgroup.warden_move
        if move is None:
            pytest.skip("no cgroup v1 memory folder here")
        assert move.done(), "the move failed"
        folder = str(move.folder)
        warden = box.process.pid
        assert folder.endswith(_cgroup_of(warden, "memory")), "the warden is not in its memory cgroup"
        box.begin(MINI / "squares.py", "squares", commands.job(mini), source=(MINI / "squares.py").read_bytes())
        assert box.runs.wait_ready(mini.limits.import_time).ok
        zygote = box.zygote.pid if box.zygote is not None else None
        assert zygote is not None
        assert folder.endswith(_cgroup_of(zygote, "memory")), "the zygote was not born in the memory cgroup"
        assert "memory-limit" in box.isolation
        limit = int(Path(folder, "memory.limit_in_bytes").read_text())
        assert limit == (mini.limits.memory_mb + 256) * 1024 * 1024


def test_a_warden_that_dies_before_the_move_leaves_a_sandbox_that_still_starts(mini):
    # The move happens in a thread while the warden starts; a warden gone by then is replaced by the
    # next job's, which joins its cgroup itself.
    with Sandbox() as box:
        box.process.kill()
        box.process.wait()
        deadline = time.monotonic() + 10
        box.pump(lambda: box.warden_dead, deadline)
        box.begin(MINI / "squares.py", "squares", commands.job(mini), source=(MINI / "squares.py").read_bytes())
        assert box.runs.wait_ready(mini.limits.import_time).ok


def test_scenario_processes_have_the_collector_on_and_the_start_up_frozen(tmp_path):
    # The warden freezes what numpy's import made (out of every collection in every fork); a
    # student's code still has a working collector for what it makes.
    body = """
        import gc
        class Cycle:
            pass
        a = Cycle()
        a.me = a
        del a
        frozen = gc.get_freeze_count() > 1000
        return {"y": int(gc.isenabled() and frozen and gc.collect() >= 1)}
        """
    folder = scenario_assignment(tmp_path / "gc", [("collector", body, 5)])
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(folder / "squares.py"), "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr

