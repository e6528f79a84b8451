"""The client's side of grading on a Dask cluster: an :class:`~grader.executor.Executor` whose
submissions are graded on the workers of a scheduler (``grader grade --scheduler tcp://host:8786``).

The client is the trusted side: it reads the submissions, ships the assignment once (a worker
plugin: :mod:`grader.cluster.worker`), sends one task per submission (its file name and bytes),
checks every result that comes back (strict JSON, :mod:`grader.cluster.envelope`) and yields it as
it arrives, for the batch to write into OUT at once, as on one machine: resume, progress and Ctrl-C
behave as they do locally. It takes a cluster as it comes (a stock ``dask scheduler`` and ``dask
worker``, no setting or resource of ours), and asks only, before anything is graded, that every
worker runs this grader's version and reaches the isolation required (``--require-isolation``;
without it, all the same level): a class is never graded under mixed protection; a worker that
joins later is checked too, and so is every result.

Its own budget of worker deaths, whatever the scheduler's ``allowed-failures``: each attempt at a
submission is counted where every worker sees it (the scheduler's task metadata, under a key of
this client's), and a worker declines an attempt once
:data:`~grader.cluster.envelope.WORKER_DEATHS` were made (each earlier one ended with its worker's
death); when the scheduler gives up first (``KilledWorker``, an ``allowed-failures`` below that), the
client submits the task again. So one poison submission takes down at most two workers, and is an
error row ("the grading machine died twice on this submission"), never a score. How many run at once
on a worker is the worker's own limit (its sandboxes, :func:`grader.cluster.worker.slots_of`).

A task's key is the resume key (the submission's name and content, the assignment digest, the
seed, the scope, the grader version): the same submission twice is graded once, and a rerun after
the client was killed gets from the cluster whatever is still there. Only as many tasks are in
flight as the cluster has sandboxes: a worker holds almost only what it is running, so its death
costs little more than its running submissions, and the client's memory does not grow with the
class. Dask cannot interrupt a running task (dask/distributed#1434): on Ctrl-C the submissions being
graded finish on their workers within their scenarios' limits, and their results are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from grader.errors import UsageError
from grader.version import __version__

try:
    import dask
    from dask.utils import parse_timedelta
    from distributed import Client, Future
    from distributed.comm import connect
    from distributed.scheduler import KilledWorker
    from distributed.security import Security
except ImportError as missing:  # the extra is not installed
    from grader.distribution import install_command
    raise UsageError(f"--scheduler needs the dask extra ({missing.name} is not installed): "
                     f"{install_command('dask')}") from None

from grader.cluster import worker as remote
from grader.cluster.envelope import WORKER_DEATHS, Expected, WorkerRefused, WorkersDied, read_result
from grader.digests import sha256
from grader.executor import Graded, GradingJob, Running
from grader.isolation_level import Requirement, shown
from grader.loading import AssignmentFiles
from grader.results import SubmissionResult
from grader.runner import Run, judge_run
from grader.spec import Assignment
from grader.submission import read_submission
from grader.visibility import Scope

DIED_TWICE = ("the grading machine died twice on this submission: two workers were lost while grading it "
              "(more memory than the machine has, outside the scenarios' limits?); it was not graded")
REFRESH_SECONDS = 2.0   # how often the client looks for workers that joined (and checks them)
WORKER_HELP = "dask worker ADDRESS"
BUDGET = "autodiff-grader-attempts"   # the scheduler's task metadata: attempts per submission, per client


@dataclass
class _Task:
    future: Future
    jobs: list[GradingJob]
    name: str
    sha: str
    key: str                      # the resume key; the future's is key, or key-again-N when resubmitted
    sent: float = field(default_factory=time.monotonic)
    killed: int = 0               # times the scheduler gave up on it (KilledWorker): each one a death at least


class DaskExecutor:
    """Grade on the workers of the scheduler at ``address`` (``tcp://`` or ``tls://``; TLS
    certificates come from Dask's configuration, see docs/cluster.md)."""

    def __init__(self, assignment: Assignment, address: str, requirement: Requirement | None = None, *,
                 connect_timeout: float | None = None):
        self.assignment = assignment
        self.address = address
        self.requirement = requirement
        # Dask's own setting (distributed.comm.timeouts.connect, 30 s), unless told otherwise.
        self.connect_timeout = connect_timeout or parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"))
        self.workers: dict[str, tuple[str, ...]] = {}   # address -> the isolation its sandboxes reach
        self.slots = 0                                  # the cluster's sandboxes: the tasks in flight
        self._client: Client | None = None
        self._plugin: remote.AssignmentPlugin | None = None
        self._tasks: dict[str, _Task] = {}   # by future key
        self._done: queue.Queue[Future] = queue.Queue()
        self._refreshed = 0.0
        self._closed = False
        self._token = os.urandom(8).hex()     # this client's attempt counts, apart from any other client's

    def __enter__(self) -> DaskExecutor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------------- connecting

    def connect(self) -> None:
        """Reach the scheduler, check it and its workers, ship the assignment. Every refusal is a
        :class:`~grader.errors.UsageError` saying what to change."""
        if self._client is not None:
            return
        self._reach()
        self._client = client = Client(self.address, timeout=self.connect_timeout, set_as_default=False,
                                       name="autodiff-grader")
        try:
            client.wait_for_workers(1, timeout=self.connect_timeout)
        except TimeoutError:
            raise UsageError(f"no worker joined the scheduler at {self.address} within {self.connect_timeout:g} s; "
                             f"start one on each grading machine: {WORKER_HELP}") from None
        self._refresh(force=True)
        if self.requirement is None:
            levels = set(self.workers.values())
            if len(levels) > 1:
                listed = "; ".join(f"{address}: {shown(level)}" for address, level in sorted(self.workers.items()))
                raise UsageError(f"the workers reach different isolation levels ({listed}): a class is graded under "
                                 "one protection; pass --require-isolation LEVEL to grade on those at LEVEL or "
                                 "above (and remove the others)")
            self.requirement = _requirement_of(levels.pop())
        self._plugin = remote.AssignmentPlugin(AssignmentFiles.of(self.assignment))
        try:
            client.register_plugin(self._plugin, name=self._plugin.name)
        except Exception as error:
            raise UsageError(f"a worker could not load the assignment: {type(error).__name__}: {error}") from None

    def _reach(self) -> None:
        """Connect once and hang up, before a Client is made: a Client whose start failed hangs the
        interpreter's exit for a minute, and its errors do not say what to change."""
        security = Security()
        certified = getattr(security, "tls_ca_file", None) and getattr(security, "tls_client_cert", None)
        if self.address.startswith("tls://") and not certified:
            raise UsageError(f"--scheduler {self.address}: TLS needs the cluster's CA and a client certificate in "
                             "Dask's configuration: DASK_DISTRIBUTED__COMM__TLS__CA_FILE, "
                             "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT and ..._CLIENT__KEY (docs/cluster.md)")

        async def hello() -> None:
            comm = await connect(self.address, timeout=self.connect_timeout,
                                 **security.get_connection_args("client"))
            await comm.close()

        try:
            asyncio.run(hello())
        except (OSError, TimeoutError, ValueError, TypeError) as error:
            raise UsageError(f"--scheduler {self.address}: cannot reach a Dask scheduler there ({error}); start "
                             "one with `dask scheduler`, check the address (tcp://HOST:8786 or tls://...) and, for "
                             "TLS, that this client's certificate is signed by the cluster's CA") from None

    def _refresh(self, force: bool = False) -> None:
        """Check the workers that joined since the last look; count the cluster's sandboxes."""
        now = time.monotonic()
        if not force and now - self._refreshed < REFRESH_SECONDS:
            return
        self._refreshed = now
        assert self._client is not None
        workers = self._client.scheduler_info(n_workers=-1)["workers"]
        new = [address for address in workers if address not in self.workers]
        if new:
            for address, text in self._client.run(remote.probe, workers=new, on_error="return").items():
                self.workers[address] = self._admit(address, text)
        for gone in [address for address in self.workers if address not in workers]:
            del self.workers[gone]
        self.slots = sum(remote.slots_of(info.get("resources") or {}, info.get("nthreads", 1))
                         for info in workers.values())

    def _admit(self, address: str, text: object) -> tuple[str, ...]:
        """The isolation of the worker at ``address`` (its probe's answer: ``text``), or why it is refused."""
        if not isinstance(text, str):
            raise UsageError(f"worker {address} could not say what it grades with ({text!r}): is this grader "
                             f"({__version__}, with its [dask] extra) installed there?")
        info = json.loads(text)
        if info["grader_version"] != __version__:
            raise UsageError(f"worker {address} runs grader {info['grader_version']}, this client "
                             f"{__version__}: install the same grader on every machine")
        level = tuple(info["isolation"])
        if self.requirement is not None and not self.requirement.met_by(level):
            raise WorkerRefused(f"worker {address} reaches isolation {shown(level)}, below the required "
                                f"{self.requirement}: a class is never graded under mixed protection; remove "
                                "that worker (or run it as root, on a kernel with Landlock) and rerun")
        return level

    # ----------------------------------------------------------------------- grading

    def grade(self, jobs: Iterable[GradingJob], scope: Scope,
              on_wait: Callable[[Running], None] | None = None) -> Iterator[Graded]:
        """Grade every job on the cluster; yield each as its result arrives."""
        scope = Scope(scope)
        self.connect()
        groups = _by_task(jobs, self.assignment, scope)
        waiting = iter(groups.items())
        try:
            self._send(waiting, scope)
            while self._tasks and not self._closed:
                try:
                    future = self._done.get(timeout=1.0)
                except queue.Empty:
                    if on_wait is not None:
                        on_wait(self.running())
                    future = None
                self._refresh()
                if future is not None:
                    task = self._tasks.pop(str(future.key))
                    result = self._outcome(task, scope)
                    future.release()
                    if result is None:        # the scheduler gave up before the grader's budget did
                        self._resubmit(task, scope)
                        continue
                    for job in task.jobs:
                        yield Graded(job, replace(result, submission=str(job.path)))
                self._send(waiting, scope)
        except BaseException:
            self.close()
            raise

    def _send(self, waiting: Iterator[tuple[str, list[GradingJob]]], scope: Scope) -> None:
        """Keep as many tasks in flight as the cluster has sandboxes."""
        assert self._client is not None and self._plugin is not None
        while len(self._tasks) < max(self.slots, 1):
            key, jobs = next(waiting, (None, []))
            if key is None:
                return
            path = jobs[0].path
            source = path.read_bytes()
            task = _Task(self._submit(key, path.name, source, jobs[0].seed, scope), jobs, path.name,
                         sha256(source).hexdigest(), key)
            self._tasks[key] = task
            task.future.add_done_callback(self._done.put)

    def _submit(self, key: str, name: str, source: bytes, seed: int, scope: Scope, future_key: str | None = None
                ) -> Future:
        assert self._client is not None
        return self._client.submit(remote.grade_remote, self.assignment.digest, name, source, seed, scope.value,
                                   [BUDGET, self._token, key], key=future_key or key, retries=0)

    def _resubmit(self, task: _Task, scope: Scope) -> None:
        """The task again, under a key of its own (the scheduler forgets the one it gave up on in its time)."""
        future_key = f"{task.key}-again-{task.killed}"
        job = task.jobs[0]
        task.future = self._submit(task.key, task.name, job.path.read_bytes(), job.seed, scope, future_key)
        task.sent = time.monotonic()
        self._tasks[future_key] = task
        task.future.add_done_callback(self._done.put)

    def _outcome(self, task: _Task, scope: Scope) -> SubmissionResult | None:
        """The checked result of a finished task, the error row of one whose workers died twice, or
        None for one to submit again (the scheduler gave up on it before the grader's budget did)."""
        future, job = task.future, task.jobs[0]
        if future.status == "finished":
            assert self.requirement is not None
            expected = Expected(self.assignment, scope, job.seed, task.sha, self.requirement)
            try:
                return read_result(future.result(), expected, f"{job.key}'s {task.name}")
            except WorkersDied:
                return self._died_twice(job, scope)
        if future.status == "error" and isinstance(future.exception(), KilledWorker):
            task.killed += 1
            attempts = self._attempts(task.key)
            if max(attempts, task.killed) < WORKER_DEATHS:
                return None
            return self._died_twice(job, scope)
        if future.status == "error":
            error = future.exception()
            raise WorkerRefused(f"the task of {job.key}'s {task.name} failed on the cluster: "
                                f"{type(error).__name__}: {error}")
        raise WorkerRefused(f"the scheduler dropped the task of {job.key}'s {task.name} ({future.status}): was it "
                            "restarted? Rerun the same command to grade the rest")

    def _died_twice(self, job: GradingJob, scope: Scope) -> SubmissionResult:
        submission = read_submission(job.path, self.assignment.forbidden_imports)
        return judge_run(Run(submission, job.seed, scope, error=DIED_TWICE), self.assignment)

    def _attempts(self, key: str) -> int:
        """The attempts the workers counted at the submission of ``key`` (0 when none started)."""
        assert self._client is not None
        return int(self._client.get_metadata([BUDGET, self._token, key], default=0))

    def running(self) -> Running:
        """The submissions in flight (each as the first of its jobs), longest first."""
        now = time.monotonic()
        return sorted(((task.jobs[0].key, now - task.sent) for task in list(self._tasks.values())),
                      key=lambda item: -item[1])

    def close(self) -> None:
        """Drop every task still in flight (those already running finish on their workers, unseen),
        withdraw the assignment from the scheduler, disconnect. Idempotent."""
        if self._closed:
            return
        self._closed = True
        client, self._client = self._client, None
        if client is None:
            return
        with contextlib.suppress(Exception):
            client.cancel([task.future for task in self._tasks.values()])
        self._tasks.clear()
        with contextlib.suppress(Exception):
            client.set_metadata([BUDGET, self._token], None)   # this client's attempt counts, dropped
        if self._plugin is not None:
            with contextlib.suppress(Exception):
                client.unregister_worker_plugin(self._plugin.name)
        with contextlib.suppress(Exception):
            client.close(timeout=5)


def task_key(name: str, content_sha: str, digest: str, seed: int, scope: Scope) -> str:
    """A grading task's key: the resume key (content, assignment, seed, grader) with the file's name,
    which shows in feedback ("carol.py, line 1"), and the scope."""
    text = "\0".join((name, content_sha, digest, str(seed), scope.value, __version__))
    return "grade-" + sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _by_task(jobs: Iterable[GradingJob], assignment: Assignment, scope: Scope) -> dict[str, list[GradingJob]]:
    """The jobs grouped by task key, in their order: the same submission twice is one task."""
    groups: dict[str, list[GradingJob]] = {}
    for job in jobs:
        content = sha256(job.path.read_bytes()).hexdigest()
        groups.setdefault(task_key(job.path.name, content, assignment.digest, job.seed, scope), []).append(job)
    return groups


def _requirement_of(level: tuple[str, ...]) -> Requirement:
    """The requirement a level meets exactly: what every later worker and result must reach."""
    abis = [int(name.removeprefix("landlock-v")) for name in level if name.startswith("landlock-v")]
    return Requirement(uid_drop="uid-drop" in level, landlock=max(abis, default=0), seccomp="seccomp" in level)

