"""What runs on a Dask worker: the assignment, loaded once; warm sandboxes; one task per submission.

* :class:`AssignmentPlugin` carries the assignment as :class:`~grader.loading.AssignmentFiles` (its
  spec and scenario files, public and hidden, and their digest). The scheduler keeps it and hands it
  to every worker that joins, a restarted one too; the worker writes the files to a private folder,
  loads them and checks them against the digest before it grades anything with them.
* :func:`grade_remote` grades one submission (its file name and bytes) in one of this worker's
  sandboxes, exactly as :class:`~grader.executor.LocalExecutor` does on one machine, and returns the
  result as JSON text (:mod:`grader.cluster.envelope`), never an object; it never raises, since an
  exception would travel back pickled.
* The worker's sandboxes are a :class:`~grader.executor.SandboxPool` of as many sandboxes as the
  worker declares ``sandbox`` slots (``dask worker --resources sandbox=N``); every task asks for one
  slot, so Dask never runs more submissions at once than there are sandboxes. Their slots (and so
  their sandbox users) are claimed on the machine (:mod:`grader.cluster.slots`).
* :func:`probe` says what this worker would grade with: the grader's version, its slots, the
  isolation its sandboxes will reach.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
import threading
import traceback
from pathlib import Path

from distributed import WorkerPlugin, get_worker

from grader.cluster import slots
from grader.cluster.envelope import FailureKind, failure_message, result_message
from grader.executor import SandboxPool, grade_lent
from grader.isolation_level import predicted
from grader.loading import AssignmentFiles
from grader.spec import Assignment
from grader.version import __version__
from grader.visibility import Scope

RESOURCE = "sandbox"              # the worker resource: one unit per sandbox
PLUGIN_PREFIX = "autodiff-grader-assignment-"

_lock = threading.Lock()
_assignments: dict[str, Assignment] = {}    # by digest: loaded by the plugin, read by the tasks
_pool: SandboxPool | None = None


class _CannotGrade(Exception):
    """This worker is not set up to grade (a setup failure, not a bug)."""


class AssignmentPlugin(WorkerPlugin):
    """The assignment of a batch, for every worker of the cluster, present and future."""

    def __init__(self, files: AssignmentFiles):
        self.files = files
        self.name = PLUGIN_PREFIX + files.digest[:16]

    def setup(self, worker) -> None:
        with _lock:
            if self.files.digest in _assignments:
                return
            folder = Path(tempfile.mkdtemp(prefix="grader-assignment-"))  # 0700: no sandbox user reads it
            atexit.register(shutil.rmtree, folder, ignore_errors=True)
            _assignments[self.files.digest] = self.files.load(folder)  # checks the digest


def grade_remote(digest: str, name: str, source: bytes, seed: int, scope: str) -> str:
    """Grade the submission ``name`` (its bytes: ``source``) with the assignment of ``digest``, on
    its ``scope`` scenarios, with ``seed``; the result (or why there is none) as envelope JSON."""
    worker = get_worker()
    try:
        assignment = _assignments.get(digest)
        if assignment is None:
            raise _CannotGrade(f"the assignment {digest[:12]} was not loaded here (see this worker's log for why)")
        if Path(name).name != name or name in ("", ".", ".."):
            raise _CannotGrade(f"{name!r} is not a file name")
        with tempfile.TemporaryDirectory(prefix="grader-submission-") as folder:
            path = Path(folder) / name
            path.write_bytes(source)
            result = grade_lent(path, assignment, _sandboxes(worker).lend, seed=seed, scope=Scope(scope))
        return result_message(result, worker.address)
    except _CannotGrade as problem:
        return failure_message(FailureKind.SETUP, str(problem), worker.address)
    except Exception:  # a bug of ours: reported, as JSON, for the client to raise
        return failure_message(FailureKind.BUG, traceback.format_exc(), worker.address)


def _sandboxes(worker) -> SandboxPool:
    """This worker process's sandboxes, started on first use: as many as its ``sandbox`` slots."""
    global _pool
    with _lock:
        if _pool is None:
            count = int(worker.state.total_resources.get(RESOURCE, 0))
            if count < 1:
                raise _CannotGrade(f"it declares no {RESOURCE} slots: start it with --resources {RESOURCE}=N")
            claim = slots.claim(count)
            _pool = SandboxPool(count, first_slot=claim.first)
            atexit.register(claim.release)  # atexit runs last in, first out: the sandboxes close first
            atexit.register(_pool.close)
        return _pool


def probe(dask_worker) -> str:
    """What this worker grades with, as JSON text: the grader's version, its sandbox slots and
    threads, and the isolation its sandboxes will reach (as they would decide it)."""
    return json.dumps({"grader_version": __version__,
                       "slots": dask_worker.state.total_resources.get(RESOURCE, 0),
                       "threads": dask_worker.state.nthreads,
                       "isolation": list(predicted())})
