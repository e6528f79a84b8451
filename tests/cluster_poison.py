"""TEST-ONLY: a Dask worker preload that makes one submission kill the worker grading it.

A real poison submission takes its worker down from outside the scenarios' limits (a fork burst
whose processes together exhaust the machine's memory, until the kernel or the container kills the
worker). That cannot be done safely on a shared test machine, so this preload, loaded only by the
cluster tests (``LocalCluster(preload=[this file])``), stands in for it: a task whose submission
contains the marker below gets its worker process SIGKILLed while the submission runs in the
worker's sandbox (0.3 s after grading starts), before any result can leave the worker, as the
kernel's OOM killer would. Nothing in the grader knows about it.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import grader.cluster.worker as remote

MARKER = b"# TEST-ONLY: this submission kills the worker that grades it (tests/cluster_poison.py)"
_grade_remote = remote.grade_remote


def _poisoned(digest, name, source, seed, scope):
    if MARKER in source:
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGKILL)).start()
        _grade_remote(digest, name, source, seed, scope)  # its sandbox runs the submission until the kill
        time.sleep(3600)  # should grading end first, its result never leaves: the kill comes before
    return _grade_remote(digest, name, source, seed, scope)


def dask_setup(worker) -> None:
    remote.grade_remote = _poisoned
