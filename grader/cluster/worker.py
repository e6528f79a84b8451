"""What runs on a Dask worker: the assignment, loaded once; warm sandboxes; one task per submission.

* :class:`AssignmentPlugin` carries the assignment as :class:`~grader.loading.AssignmentFiles` (its
  spec and scenario files, public and hidden, and their digest). The scheduler keeps it and hands it
  to every worker that joins, a restarted one too; the worker writes the files to a private folder,
  loads them and checks them against the digest before it grades anything with them.
* :func:`grade_remote` grades one submission (its file name and bytes) in one of this worker's
  sandboxes, exactly as :class:`~grader.executor.LocalExecutor` does on one machine, and returns the
  result as JSON text (:mod:`grader.cluster.envelope`), never an object; it never raises, since an
  exception would travel back pickled. Before it grades, it counts the attempt in the scheduler's
  task metadata under the key the client gave (``budget``): a task runs again only when the worker
  of its last attempt died, so once :data:`~grader.cluster.envelope.WORKER_DEATHS` attempts were
  made the submission is not graded again (the client makes its error row), whatever the
  scheduler's ``allowed-failures``.
* The worker's sandboxes are a :class:`~grader.executor.SandboxPool` of as many sandboxes as the
  worker has slots (:func:`slots_of`: its ``sandbox`` resource where it declares one, else its
  threads); a task waits for a sandbox when all are lent, so the worker never runs more
  submissions at once than it has sandboxes, on any cluster, whatever resources its tasks ask for.
  Their slots (and so their sandbox users) are claimed on the machine (:mod:`grader.cluster.slots`).
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
from distributed.utils import sync

from grader.cluster import slots
from grader.cluster.envelope import WORKER_DEATHS, FailureKind, failure_message, result_message
from grader.executor import SandboxPool, grade_lent
from grader.isolation_level import predicted
from grader.loading import AssignmentFiles
from grader.spec import Assignment
from grader.version import __version__
from grader.visibility import Scope

RESOURCE = "sandbox"              # a worker resource that, where declared, says how many sandboxes it runs
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


def grade_remote(digest: str, name: str, source: bytes, seed: int, scope: str, budget: list | None = None) -> str:
    """Grade the submission ``name`` (its bytes: ``source``) with the assignment of ``digest``, on
    its ``scope`` scenarios, with ``seed``; the result (or why there is none) as envelope JSON.
    ``budget``: the scheduler's metadata key counting this submission's attempts (see the module)."""
    worker = get_worker()
    try:
        assignment = _assignments.get(digest)
        if assignment is None:
            raise _CannotGrade(f"the assignment {digest[:12]} was not loaded here (see this worker's log for why)")
        if Path(name).name != name or name in ("", ".", ".."):
            raise _CannotGrade(f"{name!r} is not a file name")
        if budget is not None and _attempts_before(worker, budget) >= WORKER_DEATHS:
            return failure_message(FailureKind.DIED, f"{WORKER_DEATHS} workers died grading {name} before",
                                   worker.address)
        with tempfile.TemporaryDirectory(prefix="grader-submission-") as folder:
            path = Path(folder) / name
            path.write_bytes(source)
            result = grade_lent(path, assignment, _sandboxes(worker).lend, seed=seed, scope=Scope(scope))
        return result_message(result, worker.address)
    except _CannotGrade as problem:
        return failure_message(FailureKind.SETUP, str(problem), worker.address)
    except Exception:  # a bug of ours: reported, as JSON, for the client to raise
        return failure_message(FailureKind.BUG, traceback.format_exc(), worker.address)


def _attempts_before(worker, budget: list) -> int:
    """The attempts at this submission before this one, counting this one in (the scheduler's task
    metadata: plain data, no code of ours runs there). Attempts of one task come one after another
    (the next starts once the last one's worker is gone), so a read then a write is safe."""
    before = sync(worker.loop, worker.scheduler.get_metadata, keys=budget, default=0)
    sync(worker.loop, worker.scheduler.set_metadata, keys=budget, value=int(before) + 1)
    return int(before)


def slots_of(resources: dict, threads: int) -> int:
    """How many sandboxes a worker runs: its ``sandbox`` resource where it declares one, else its
    threads (the submissions Dask runs on it at once)."""
    declared = int(resources.get(RESOURCE, 0))
    return declared if declared > 0 else max(int(threads), 1)


def _sandboxes(worker) -> SandboxPool:
    """This worker process's sandboxes, started on first use: as many as its slots (:func:`slots_of`)."""
    global _pool
    with _lock:
        if _pool is None:
            count = slots_of(worker.state.total_resources, worker.state.nthreads)
            claim = slots.claim(count)
            _pool = SandboxPool(count, first_slot=claim.first)
            atexit.register(claim.release)  # atexit runs last in, first out: the sandboxes close first
            atexit.register(_pool.close)
        return _pool


def probe(dask_worker) -> str:
    """What this worker grades with, as JSON text: the grader's version, its sandbox slots and
    threads, and the isolation its sandboxes will reach (as they would decide it)."""
    return json.dumps({"grader_version": __version__,
                       "slots": slots_of(dask_worker.state.total_resources, dask_worker.state.nthreads),
                       "threads": dask_worker.state.nthreads,
                       "isolation": list(predicted())})
