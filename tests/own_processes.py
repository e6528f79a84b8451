"""The processes a test started, found by ancestry in /proc: a test looks only at what it started, so a
grader running beside the suite (a student's `grader check --watch` from the same venv, a benchmark)
never fails it.

A process is named by its pid and its start time (field 22 of /proc/PID/stat, in clock ticks since
boot), so a pid reused by another process is never taken for the one seen before.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import grader.sandbox.spawn

Process = tuple[int, int]   # (pid, start time)


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a running process, or None when it is gone (a zombie, which has
    ended and waits only to be reaped by whoever adopted it, is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else (int(fields[1]), int(fields[19]))


def descendants(root: int) -> set[Process]:
    """Every live process below ``root`` (its children, theirs, ...)."""
    parents: dict[int, list[tuple[int, int]]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            found = _stat(int(entry))
            if found is not None:
                parents.setdefault(found[0], []).append((int(entry), found[1]))
    below: set[Process] = set()
    todo = [root]
    while todo:
        for child in parents.get(todo.pop(), ()):
            if child not in below:
                below.add(child)
                todo.append(child[0])
    return below


def sandboxes_below(root: int) -> set[Process]:
    """The sandbox processes (wardens, zygotes, scenario processes) below ``root``."""
    script = grader.sandbox.spawn.CHILD_SCRIPT.encode()
    found = set()
    for pid, start in descendants(root):
        try:
            if script in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add((pid, start))
        except OSError:
            continue
    return found


def alive(processes: set[Process]) -> set[Process]:
    """Those of ``processes`` still running."""
    return {(pid, start) for pid, start in processes if (_stat(pid) or (0, -1))[1] == start}


def wait_gone(processes: set[Process], timeout: float = 10.0) -> set[Process]:
    """Wait for ``processes`` to end; those still running after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    left = alive(processes)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = alive(left)
    return left


def wait_until(condition, timeout: float = 10.0) -> bool:
    """Wait for ``condition()`` to hold, looking every 20 ms; whether it held within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True
