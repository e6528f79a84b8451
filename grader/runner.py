"""Grade one submission against one assignment: the library's main entry point.

The runner produces a :class:`~grader.results.SubmissionResult` and nothing else; reporters
render it. Flow: static checks in the grader (no student code runs here), then one sandbox per
submission: the scenario programs and their inputs go in, observations come out, and each is
judged here. A scenario that times out or kills its sandbox costs only itself: the rest run in a
fresh sandbox.
"""

from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import grader
from grader.judge import judge, scenario_result
from grader.results import Feedback, ScenarioResult, Status, SubmissionResult
from grader.sandbox import wire
from grader.sandbox.launcher import Sandbox
from grader.scoring import task_scores, total
from grader.spec import Assignment, ScenarioSpec
from grader.submission import inspect_submission


def new_seed() -> int:
    """A fresh seed for a run; printed and recorded so the run can be reproduced."""
    return secrets.randbelow(2**31)


def grade_submission(submission: str | Path, assignment: Assignment, *, seed: int | None = None,
                     visibility: str = "public", slot: int = 0, sandbox: Sandbox | None = None) -> SubmissionResult:
    """Grade ``submission`` on the ``visibility`` scenarios ("public" or "all") of ``assignment``.

    ``sandbox`` may be one started earlier (its interpreter loaded while the caller loaded the
    assignment) or one kept warm across submissions; the caller keeps it, and it is left ready
    for the next submission. Without one, a sandbox is started and closed here. ``slot`` tells
    parallel workers' sandboxes apart.
    """
    started = time.monotonic()
    submission = Path(submission)
    seed = new_seed() if seed is None else seed
    box = sandbox or Sandbox(slot)
    try:
        static = inspect_submission(submission, assignment.forbidden_imports)
        specs = assignment.select(visibility)
        if static.problem is not None:
            return _finish(assignment, submission, static.sha256, seed, visibility, started, (),
                           _not_run(specs, static.problem), error=static.problem)
        inputs = {spec.id: spec.code.inputs(seed) for spec in specs}
        run = _run(box, submission, assignment, specs, inputs, _job(assignment, specs, inputs))
        error = run.error
        results = run.results
        if run.forbidden:
            error = (f"{submission.name} tried to import {run.forbidden[0]!r}, which this assignment "
                     f"does not allow; the point is to write the gradients yourself")
        return _finish(assignment, submission, static.sha256, seed, visibility, started, run.isolation,
                       results, error=error, timings={"import": round(run.import_seconds, 6)})
    finally:
        if sandbox is None:
            box.close()
        else:
            box.stop()


def _job(assignment: Assignment, specs: tuple[ScenarioSpec, ...], inputs: dict) -> dict:
    """What the sandbox receives: programs and inputs only (no checks, no expected values)."""
    return {
        "scenarios": [{"index": index, "id": spec.id, "function": spec.code.program.__name__,
                       "source": spec.code.source, "inputs": wire.encode(inputs[spec.id]),
                       "cpu_seconds": math.ceil(spec.time_limit) + 1}
                      for index, spec in enumerate(specs)],
        "forbidden": list(assignment.forbidden_imports),
        "memory_mb": assignment.limits.memory_mb,
        "output_limit": assignment.limits.output_bytes,
    }


@dataclass
class _Run:
    results: list[ScenarioResult] = field(default_factory=list)
    import_seconds: float = 0.0
    error: str | None = None
    isolation: tuple[str, ...] = ()
    forbidden: list[str] = field(default_factory=list)   # modules the submission tried to import


def _run(box: Sandbox, submission: Path, assignment: Assignment, specs, inputs, job) -> _Run:
    """Run every scenario; after one that timed out or died, the rest run in a fresh zygote."""
    run = _Run()
    index = 0
    while index < len(specs):
        box.send_job(submission, submission.stem, job)
        imported = box.wait_ready(assignment.limits.import_time)
        run.import_seconds += imported.duration
        run.isolation = run.isolation or box.isolation
        run.forbidden += [module for module in box.forbidden_seen if module not in run.forbidden]
        if not imported.ok:
            problem = _import_problem(submission, imported)
            feedback = Feedback(problem, stdout=imported.stdout, stderr=imported.stderr,
                                traceback=imported.error.traceback if imported.error else None)
            run.results += [scenario_result(spec, Status.NOT_RUN, feedback) for spec in specs[index:]]
            if index == 0:  # an import that worked before is the sandbox failing, not the file
                run.error = problem
            break
        while index < len(specs):
            spec = specs[index]
            outcome = box.run(index, spec.time_limit)
            run.results.append(judge(spec, inputs[spec.id], outcome, assignment.limits.memory_mb))
            index += 1
            if outcome.timed_out or outcome.sandbox_died:
                break
        run.forbidden += [module for module in box.forbidden_seen if module not in run.forbidden]
    return run


def _import_problem(submission: Path, imported) -> str:
    name = submission.name
    if imported.error is not None:
        raised = imported.error
        if raised.is_a("NotImplementedError"):
            return f"importing {name} raised NotImplementedError: {raised.message} (only the task bodies may raise it)"
        return f"importing {name} failed: {raised}"
    if imported.timed_out:
        return f"{imported.problem} (an infinite loop or input() at the top level of {name}?)"
    return f"{name} could not be loaded: {imported.problem}"


def _not_run(specs, message: str) -> list[ScenarioResult]:
    return [scenario_result(spec, Status.NOT_RUN, Feedback(message)) for spec in specs]


def _zeroed(result: ScenarioResult) -> ScenarioResult:
    return replace(result, points=0.0)


def _finish(assignment: Assignment, submission: Path, sha256: str, seed: int, visibility: str, started: float,
            isolation: tuple[str, ...], results: list[ScenarioResult], *, error: str | None = None,
            timings: dict | None = None) -> SubmissionResult:
    scenarios = tuple(results)
    score, max_score = total(scenarios)
    if error is not None:
        score = 0.0
        scenarios = tuple(_zeroed(s) for s in scenarios)
    timings = {**(timings or {}), "total": round(time.monotonic() - started, 6)}
    return SubmissionResult(
        assignment=assignment.id, assignment_digest=assignment.digest, submission=str(submission),
        submission_sha256=sha256, seed=seed, visibility=visibility, score=score, max_score=max_score,
        tasks=task_scores(assignment, scenarios), scenarios=scenarios, grader_version=grader.__version__,
        isolation=isolation, timings=timings, error=error)
