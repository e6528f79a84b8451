"""TEST-ONLY: a Dask worker preload that makes one submission kill the worker grading it.

A real poison submission takes its worker down from outside the scenarios' limits (a fork burst
whose processes together exhaust the machine's memory, until the kernel or the container kills the
worker). That cannot be done safely on a shared test machine, so this preload, loaded only by the
cluster tests (``LocalCluster(preload=[this file])``, ``dask worker --preload``), stands in for it:
when a submission containing the marker below is graded (its sandbox runs it: a worker that
declines to grade it again, its budget of deaths spent, runs nothing), the worker process is
SIGKILLed 0.3 s later, before any result can leave the worker, as the kernel's OOM killer would.
Nothing in the grader knows about it.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import grader.cluster.worker as remote

MARKER = b"# TEST-ONLY: this submission kills the worker that grades it (tests/cluster_poison.py)"
_grade_lent = remote.grade_lent


def _poisoned(path, *args, **kwargs):
    if MARKER in path.read_bytes():
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGKILL)).start()
        _grade_lent(path, *args, **kwargs)  # its sandbox runs the submission until the kill
        time.sleep(3600)  # should grading end first, its result never leaves: the kill comes before
    return _grade_lent(path, *args, **kwargs)


def dask_setup(worker) -> None:
    remote.grade_lent = _poisoned
