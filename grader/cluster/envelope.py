"""The one message a grading task sends back from its worker, and how the client reads it.

A task returns JSON text, never an object: the client parses it with a strict JSON reader (no NaN
or Infinity, bounded size), rebuilds the :class:`~grader.results.SubmissionResult` with
:meth:`~grader.results.SubmissionResult.from_dict`, and checks it against what it asked for before
the result may be written: the same assignment, seed, scope, submission content and grader, every
scenario of the assignment in its order with its points, a total that adds up, and an isolation
level that meets the batch's requirement. Pure: text in, a result or a typed error out.

Shapes: ``{"envelope": 1, "worker": ADDRESS, "result": {...}}``, or instead of ``result`` a
``"failure": {"kind": "setup" | "bug" | "died", "message": TEXT}``: the worker could not grade (it
lacks the assignment), grading raised (a bug of ours, with its traceback), or the submission's
budget of worker deaths is spent (:data:`WORKER_DEATHS` workers died grading it before: it is not
graded again).
"""

from __future__ import annotations

import json
from enum import Enum

from grader.errors import GraderError
from grader.isolation_level import Requirement, shown
from grader.records import record
from grader.results import SubmissionResult
from grader.spec import Assignment
from grader.version import __version__
from grader.visibility import Scope

ENVELOPE_VERSION = 1
MAX_BYTES = 64 * 1024 * 1024   # far above any result: captured output is bounded per scenario
# The grader's own budget, whatever the scheduler's allowed-failures: after this many of a
# submission's workers died grading it, it is an error row, so one poison submission takes down at
# most this many workers.
WORKER_DEATHS = 2


class FailureKind(str, Enum):
    SETUP = "setup"   # this worker cannot grade: no assignment loaded
    BUG = "bug"       # grading raised: a bug in the grader (the message is its traceback)
    DIED = "died"     # WORKER_DEATHS workers died grading this submission before: not graded again


class WorkerRefused(GraderError):
    """A worker cannot grade this batch, or sent what the client must not write: the batch stops
    (its results so far are kept) and the message says which worker and what to do."""


class WorkerBug(RuntimeError):
    """Grading raised on a worker: a bug in the grader, reported as one (exit 3), like a local one."""


class WorkersDied(Exception):
    """The submission's budget of worker deaths is spent (a worker declined to grade it again)."""


@record
class Expected:
    """What the client asked for: the result must be of this."""

    assignment: Assignment
    scope: Scope
    seed: int
    submission_sha256: str
    requirement: Requirement


def result_message(result: SubmissionResult, worker: str) -> str:
    return json.dumps({"envelope": ENVELOPE_VERSION, "worker": worker, "result": result.to_dict()},
                      ensure_ascii=False, allow_nan=False)


def failure_message(kind: FailureKind, message: str, worker: str) -> str:
    return json.dumps({"envelope": ENVELOPE_VERSION, "worker": worker,
                       "failure": {"kind": kind.value, "message": message}}, ensure_ascii=False)


def read_result(text: object, expected: Expected, name: str) -> SubmissionResult:
    """The result in ``text``, checked against ``expected`` (``name``: the submission, for messages).
    Raises :class:`WorkerRefused` for anything the client must not write, :class:`WorkerBug` for a
    failure the worker reported as a bug, :class:`WorkersDied` when the submission's workers died
    too often to grade it again."""
    if not isinstance(text, str):
        raise WorkerRefused(f"a worker sent back a {type(text).__name__} for {name}, not JSON text: is it running "
                            f"this grader ({__version__})?")
    if len(text) > MAX_BYTES:
        raise WorkerRefused(f"a worker sent back {len(text):,} characters for {name}, more than any result")
    try:
        message = json.loads(text, parse_constant=_no_constant)
    except ValueError as error:
        raise WorkerRefused(f"a worker sent back something that is not strict JSON for {name}: {error}") from None
    if not isinstance(message, dict) or message.get("envelope") != ENVELOPE_VERSION:
        raise WorkerRefused(f"a worker sent back a message this grader ({__version__}) does not read for "
                            f"{name}: install the same grader on every machine")
    worker = str(message.get("worker", "a worker"))
    if "failure" in message:
        failure = message["failure"] if isinstance(message["failure"], dict) else {}
        text = str(failure.get("message", ""))
        if failure.get("kind") == FailureKind.BUG.value:
            raise WorkerBug(f"grading {name} raised on {worker}:\n{text}")
        if failure.get("kind") == FailureKind.DIED.value:
            raise WorkersDied(text)
        raise WorkerRefused(f"{worker} cannot grade: {text}")
    try:
        result = SubmissionResult.from_dict(message["result"])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise WorkerRefused(f"{worker} sent back a result for {name} that is not one "
                            f"({type(error).__name__}: {error})") from None
    problem = _mismatch(result, expected)
    if problem is not None:
        raise WorkerRefused(f"{worker} sent back a result for {name} that {problem}")
    return result


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _mismatch(result: SubmissionResult, expected: Expected) -> str | None:
    """What is wrong with ``result`` for what was asked, or None."""
    assignment = expected.assignment
    asked = (assignment.id, assignment.digest, expected.seed, expected.scope, expected.submission_sha256,
             __version__)
    got = (result.assignment, result.assignment_digest, result.seed, result.visibility, result.submission_sha256,
           result.grader_version)
    names = ("assignment", "assignment digest", "seed", "scope", "submission content", "grader version")
    for label, want, have in zip(names, asked, got):
        if want != have:
            return f"is of another {label} ({have!r}, asked for {want!r})"
    planned = assignment.select(expected.scope)
    if [(s.id, s.points) for s in planned] != [(s.id, s.max_points) for s in result.scenarios]:
        return "does not have the assignment's scenarios, in its order, with their points"
    for scenario in result.scenarios:
        if not 0 <= scenario.points <= scenario.max_points or (scenario.points and not scenario.passed):
            return f"gives scenario {scenario.id} {scenario.points} points as {scenario.status.value}"
    total = round(sum(s.points for s in result.scenarios), 6)
    if (result.error is None and result.score != total) or (result.error is not None and result.score != 0):
        return f"scores {result.score}, which its scenarios do not add up to"
    if result.max_score != round(sum(s.max_points for s in result.scenarios), 6):
        return f"is out of {result.max_score}, which its scenarios do not add up to"
    ran = result.error is None or bool(result.isolation)  # a file that could not even run reached no sandbox
    if ran and not expected.requirement.met_by(result.isolation):
        return (f"was graded at isolation {shown(result.isolation)}, below the required {expected.requirement}: "
                "remove that worker from the cluster and rerun (the results so far are kept)")
    return None
