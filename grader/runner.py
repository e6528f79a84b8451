"""Grade one submission against one assignment: the library's main entry point.

The runner produces a :class:`~grader.results.SubmissionResult` and nothing else; reporters
render it. Two phases: *execute* (static checks in the grader, then the programs run in the
sandbox and their raw outcomes come back) and *judge* (each outcome against its check, in the
grader). Execution needs only a :class:`~grader.rubric.Rubric`, judging the loaded assignment,
so ``grader check`` runs programs while the grader is still importing the checks. A scenario
that times out or kills its zygote costs only itself: the rest run in a fresh zygote.
"""

from __future__ import annotations

import contextlib
import random
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator

import grader
from grader.rubric import Program, Rubric
from grader.outcomes import ImportOutcome, RunOutcome
from grader.sandbox.encoding import encode
from grader.sandbox.launcher import Sandbox
from grader.spec import Assignment
from grader.submission import StaticReport, inspect_submission

if TYPE_CHECKING:
    from grader.results import ScenarioResult, SubmissionResult

# Judging's modules (judge, results, scoring) are imported where judging starts, not above:
# `grader check` sends the sandbox its job before it needs them (~7 ms sooner), and its loader
# thread imports them while the programs run.


def new_seed() -> int:
    """A fresh seed for a run; printed and recorded so the run can be reproduced."""
    return random.SystemRandom().randrange(2**31)  # os.urandom; not secrets, which loads OpenSSL (~5 ms)


def grade_submission(submission: str | Path, assignment: Assignment, *, seed: int | None = None,
                     visibility: str = "public", slot: int = 0, sandbox: Sandbox | None = None,
                     lend: Callable[[], ContextManager[Sandbox]] | None = None) -> SubmissionResult:
    """Grade ``submission`` on the ``visibility`` scenarios ("public" or "all") of ``assignment``.

    ``sandbox`` may be one started earlier (its interpreter loaded while the caller loaded the
    assignment) or one kept warm across submissions; the caller keeps it, and it is left ready
    for the next submission. ``lend``, instead, lends one only while the programs run (``with
    lend() as sandbox``): it is handed back ready for the next submission before this one is judged,
    so a batch's sandboxes never wait for the grader. Without either, a sandbox is started and
    closed here. ``slot`` tells parallel workers' sandboxes apart.
    """
    rubric = Rubric.of(assignment, assignment.select(visibility))
    return grade_with_loader(submission, rubric, lambda: assignment, seed=seed, visibility=visibility, slot=slot,
                             sandbox=sandbox, lend=lend)


def grade_with_loader(submission: str | Path, rubric: Rubric, load: Callable[[], Assignment], *,
                      seed: int | None = None, visibility: str = "public", slot: int = 0,
                      sandbox: Sandbox | None = None, started_job: Callable[[], None] = lambda: None,
                      closing: bool = False, lend: Callable[[], ContextManager[Sandbox]] | None = None
                      ) -> SubmissionResult:
    """Like :func:`grade_submission`, with the assignment still loading: ``load()`` returns it
    (blocking until it is there) and is only called when a check or an input is needed.
    ``started_job()`` is called once the sandbox has the job, the moment to start loading.
    ``closing``: the caller closes ``sandbox`` right after (``grader check``), so it is not made
    ready for another submission (a round trip to the sandbox that closing makes moot); its
    processes are killed as soon as the runs are over."""
    started = time.monotonic()
    submission = Path(submission)
    seed = new_seed() if seed is None else seed
    inputs: dict[str, dict] = {}

    def inputs_for(program: Program) -> dict:
        if program.id not in inputs:
            inputs[program.id] = _spec(load(), program.id).code.inputs(seed) if program.has_inputs else {}
        return inputs[program.id]

    static = inspect_submission(submission, rubric.forbidden)  # in the grader: no sandbox needed yet
    if static.problem is not None:
        from grader.judge import scenario_result
        from grader.results import Feedback, Status
        assignment = load()
        return _finish(assignment, submission, static.sha256, seed, visibility, started, (),
                       [scenario_result(spec, Status.NOT_RUN, Feedback(static.problem))
                        for spec in assignment.select(visibility)], error=static.problem)
    with _sandbox_for(sandbox, lend, slot, closing) as box:
        run = _execute(box, submission, rubric, inputs_for, static, started_job)
        assignment = load()
        specs = assignment.select(visibility)
        if Rubric.of(assignment, specs).programs != rubric.programs:  # the files changed under us: rerun
            rubric = Rubric.of(assignment, specs)
            inputs.clear()
            run = _execute(box, submission, rubric, inputs_for, static)
        if closing:
            box.kill_submission()  # nothing more runs in it: it dies while we judge
    results = [_judged(spec, program, inputs_for(program), run, assignment)
               for spec, program in zip(specs, rubric.programs)]
    error = run.error
    if run.forbidden:
        error = (f"{submission.name} tried to import {run.forbidden[0]!r}, which this assignment "
                 f"does not allow; the point is to write the gradients yourself")
    return _finish(assignment, submission, static.sha256, seed, visibility, started, run.isolation,
                   results, error=error, timings={"import": round(run.import_seconds, 6)},
                   import_output=run.import_output or ("", ""))


@contextlib.contextmanager
def _sandbox_for(sandbox: Sandbox | None, lend: Callable[[], ContextManager[Sandbox]] | None, slot: int,
                 closing: bool) -> Iterator[Sandbox]:
    """The sandbox to run the programs in, for as long as they run; then readied for the next
    submission (``stop``), unless the caller closes it right after (``closing``)."""
    if lend is not None:
        with lend() as box:
            try:
                yield box
            finally:
                box.stop()
    elif sandbox is not None:
        try:
            yield sandbox
        finally:
            if not closing:
                sandbox.stop()
    else:
        with Sandbox(slot) as box:
            yield box


# --------------------------------------------------------------------------- execute

@dataclass
class _Run:
    outcomes: dict[int, RunOutcome] = field(default_factory=dict)
    not_run: dict[int, ImportOutcome] = field(default_factory=dict)  # the import that failed before them
    import_seconds: float = 0.0
    error: str | None = None
    isolation: tuple[str, ...] = ()
    forbidden: list[str] = field(default_factory=list)   # modules the submission tried to import
    import_output: tuple[str, str] | None = None         # stdout, stderr of the first import that worked


def _execute(box: Sandbox, submission: Path, rubric: Rubric, inputs_for: Callable[[Program], dict],
             static: StaticReport, started_job: Callable[[], None] = lambda: None) -> _Run:
    """Run every program; after one that timed out or died, the rest run in a fresh zygote.

    Public programs go first, then hidden ones, in two separate streams: the sandbox gets the next
    command while a scenario runs, and a hidden program must never wait there while a public
    scenario (whose output students see) could read it. Within each, programs whose inputs are
    known go first, so they run while the rest may still be loading."""
    run = _Run()
    queue = sorted(rubric.programs, key=lambda p: (p.hidden, p.has_inputs))
    position = 0
    while position < len(queue):
        box.send_job(submission, submission.stem, rubric.job(), source=static.source, code=static.code)
        started_job()
        imported = box.wait_ready(rubric.limits.import_time)
        run.import_seconds += imported.duration
        run.isolation = run.isolation or box.isolation
        _note_forbidden(run, box)
        if not imported.ok:
            if position == 0:  # an import that worked before is the sandbox failing, not the file
                run.error = _import_problem(submission, imported)
            run.not_run.update((program.index, imported) for program in queue[position:])
            break
        if run.import_output is None:
            run.import_output = (imported.stdout, imported.stderr)
        for hidden in (False, True):
            commands = ((program.index, program.time_limit, program.payload(encode(inputs_for(program))))
                        for program in queue[position:] if program.hidden == hidden)
            for index, outcome in box.run_all(commands):
                run.outcomes[index] = outcome
                position += 1
            if position < len(queue) and queue[position].hidden == hidden:
                break  # a run timed out or killed its zygote: the rest start again in a fresh one
        _note_forbidden(run, box)
    return run


def _note_forbidden(run: _Run, box: Sandbox) -> None:
    run.forbidden += [module for module in box.forbidden_seen if module not in run.forbidden]


def _import_problem(submission: Path, imported: ImportOutcome) -> str:
    name = submission.name
    if imported.error is not None:
        raised = imported.error
        if raised.is_a("NotImplementedError"):
            return f"importing {name} raised NotImplementedError: {raised.message} (only the task bodies may raise it)"
        return f"importing {name} failed: {raised}"
    if imported.timed_out:
        return f"{imported.problem} (an infinite loop or input() at the top level of {name}?)"
    return f"{name} could not be loaded: {imported.problem}"


# --------------------------------------------------------------------------- judge

def _judged(spec, program: Program, inputs: dict, run: _Run, assignment: Assignment) -> ScenarioResult:
    from grader.judge import judge, scenario_result
    from grader.results import Feedback, Status
    outcome = run.outcomes.get(program.index)
    if outcome is not None:
        return judge(spec, inputs, outcome, assignment.limits.memory_mb)
    failed = run.not_run.get(program.index)  # the zygote meant to run it could not import the file
    if failed is None:
        return scenario_result(spec, Status.NOT_RUN, Feedback("not run"))
    feedback = Feedback(run.error or f"not run: the submission could not be imported again ({failed.problem or failed.error})",
                        stdout=failed.stdout, stderr=failed.stderr,
                        traceback=failed.error.traceback if failed.error else None)
    return scenario_result(spec, Status.NOT_RUN, feedback)


def _spec(assignment: Assignment, scenario_id: str):
    return next(spec for spec in assignment.scenarios if spec.id == scenario_id)


def _finish(assignment: Assignment, submission: Path, sha256: str, seed: int, visibility: str, started: float,
            isolation: tuple[str, ...], results: list[ScenarioResult], *, error: str | None = None,
            timings: dict | None = None, import_output: tuple[str, str] = ("", "")) -> SubmissionResult:
    from grader.results import SubmissionResult
    from grader.scoring import task_scores, total
    scenarios = tuple(results)
    score, max_score = total(scenarios)
    if error is not None:
        score = 0.0
        scenarios = tuple(replace(s, points=0.0) for s in scenarios)
    timings = {**(timings or {}), "total": round(time.monotonic() - started, 6)}
    return SubmissionResult(
        assignment=assignment.id, assignment_digest=assignment.digest, submission=str(submission),
        submission_sha256=sha256, seed=seed, visibility=visibility, score=score, max_score=max_score,
        tasks=task_scores(assignment, scenarios), scenarios=scenarios, grader_version=grader.__version__,
        isolation=isolation, timings=timings, error=error, import_stdout=import_output[0],
        import_stderr=import_output[1])
