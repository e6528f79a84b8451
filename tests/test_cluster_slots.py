"""Sandbox slots claimed per process on one machine: disjoint, freed when their holder dies."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from grader.cluster import slots


def test_claims_of_one_machine_never_overlap(tmp_path):
    first, second = slots.claim(2, tmp_path / "locks"), slots.claim(3, tmp_path / "locks")
    assert (first.first, second.first) == (0, 2)
    first.release()
    third = slots.claim(1, tmp_path / "locks")
    assert third.first == 0, "released slots are the first taken again"
    fourth = slots.claim(2, tmp_path / "locks")
    assert fourth.first == 5, "a run of free slots, not a gap that is too short"
    for claim in (second, third, fourth):
        claim.release()


def test_a_killed_holder_frees_its_slots(tmp_path):
    folder = tmp_path / "locks"
    code = (f"import sys, time\nfrom grader.cluster import slots\nclaim = slots.claim(2, __import__('pathlib')"
            f".Path({str(folder)!r}))\nprint(claim.first, flush=True)\ntime.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "0"
    assert slots.claim(1, folder).first == 2
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    assert slots.claim(2, folder).first == 0


def test_a_folder_others_can_enter_is_refused(tmp_path):
    folder = tmp_path / "open"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    with pytest.raises(RuntimeError, match="mode 0700"):
        slots.claim(1, folder)
