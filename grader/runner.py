"""Grade one submission against one assignment: the library's main entry point.

Two steps. :func:`execute` runs the submission's programs in a sandbox and keeps what came back,
raw and untrusted (a :class:`Run`); it needs only the :class:`~grader.spec.Plan`, so ``grader
check`` runs programs while the grader still imports the checks. :func:`judge_run` turns a run into
a :class:`~grader.results.SubmissionResult`, in the grader, with the loaded assignment's checks.
:func:`grade_submission` does both. The runner produces result data and nothing else; reporters
render it. A scenario that times out or kills its zygote costs only itself: the rest run in a
fresh zygote.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import grader.commands as commands
from grader.formats import ReadContext
from grader.outcomes import ImportOutcome, RunOutcome
from grader.sandbox.launcher import End, Sandbox
from grader.sandbox.scheduler import RunRequest
from grader.spec import Assignment, Plan, ScenarioPlan, ScenarioSpec
from grader.submission import Submission, forbidden_because, read_submission
from grader.version import __version__
from grader.visibility import Scope, Visibility

if TYPE_CHECKING:
    from grader.results import ProvidedChange, ScenarioResult, SubmissionResult

# Judging's modules (judge, results, scoring) are imported where judging starts, not above:
# `grader check` sends the sandbox its job before it needs them, and its loader thread imports
# them while the programs run.

Inputs = Callable[[ScenarioPlan], dict]  # a scenario's inputs for this run's seed
# Judges one outcome (by its position in the run's scope) as it comes back, while the sandbox runs
# the next program; None when it cannot yet (judge_run then judges it).
EarlyJudge = Callable[[int, RunOutcome], "ScenarioResult | None"]

# Once a scenario of a task has timed out, the task's other scenarios run with at most this limit:
# a runaway (an infinite loop in detach, say) usually makes every scenario of its task loop, and a
# student should not wait for it once per scenario. A scenario of the reference takes milliseconds.
AFTER_A_TIMEOUT = 1.0


def new_seed() -> int:
    """A fresh seed for a run; printed and recorded so the run can be reproduced."""
    return random.SystemRandom().randrange(2**31)  # os.urandom; not secrets, which loads OpenSSL


@dataclass
class Run:
    """What executing one submission produced, before any verdict: the sandbox's raw outcomes."""

    submission: Submission
    seed: int
    scope: Scope
    started: float = field(default_factory=time.monotonic)  # when its own work began (not its wait)
    outcomes: dict[int, RunOutcome] = field(default_factory=dict)    # by position in plan.select(scope)
    not_run: dict[int, ImportOutcome] = field(default_factory=dict)  # the import that failed before them
    import_seconds: float = 0.0
    error: str | None = None             # why the submission could not be graded at all
    isolation: tuple[str, ...] = ()
    forbidden: list[str] = field(default_factory=list)   # modules the submission tried to import
    import_output: tuple[str, str] = ("", "")            # stdout, stderr of the first import that worked
    provided_changes: tuple[ProvidedChange, ...] | None = None  # None: not compared yet (see changed_parts)
    judged: dict[int, ScenarioResult] = field(default_factory=dict)  # verdicts given while it ran (see execute)


def changed_parts(run: Run, plan: Plan) -> tuple[ProvidedChange, ...]:
    """What the run's submission changed of the handout's provided code, compared once per run."""
    if run.provided_changes is None:
        run.provided_changes = ()
        if plan.provided and run.submission.module_text is not None:
            from grader.provided import changes
            run.provided_changes = changes(run.submission.module_text, plan.student_functions, plan.provided)
    return run.provided_changes


def grade_submission(submission: str | Path | Submission, assignment: Assignment, *, seed: int | None = None,
                     scope: Scope | str = Scope.PUBLIC, sandbox: Sandbox | None = None) -> SubmissionResult:
    """Grade ``submission`` on the ``scope`` scenarios of ``assignment``.

    ``sandbox`` may be one started earlier or kept warm across submissions: the caller keeps it,
    and it is left ready for the next submission. Without it, one is started and closed here.
    """
    if not isinstance(submission, Submission):
        submission = read_submission(Path(submission), assignment.forbidden_imports,
                                     ReadContext.of(assignment))
    seed = new_seed() if seed is None else seed
    scope = Scope(scope)
    if submission.problem is not None:
        return judge_run(Run(submission, seed, scope, error=submission.problem), assignment)
    with _ready_after(sandbox) as box:
        run = execute(submission, assignment, box, seed=seed, scope=scope,
                      inputs=lambda planned: assignment.inputs(planned.id, seed))
    return judge_run(run, assignment)


@contextlib.contextmanager
def _ready_after(sandbox: Sandbox | None) -> Iterator[Sandbox]:
    """The caller's sandbox, readied for its next submission once this one has run; or a new one."""
    if sandbox is None:
        with Sandbox() as box:
            yield box
        return
    try:
        yield sandbox
    finally:
        sandbox.end(End.SUBMISSION)


# --------------------------------------------------------------------------- execute


def execute(submission: Submission, plan: Plan, sandbox: Sandbox, *, seed: int, scope: Scope,
            inputs: Inputs, judge: EarlyJudge | None = None) -> Run:
    """Run every program of ``scope`` on ``submission`` (which must be runnable) in ``sandbox``.

    Public programs go first, then hidden ones (the sandbox's scheduler keeps them apart: a hidden
    program never waits in the job pipe while a public scenario, whose output students see, could
    read it). Within each, programs whose inputs are known without the loaded code go first, so they
    run while the rest may still be loading. After a run that timed out or killed its zygote, the
    submission begins again in a fresh zygote for the rest. With ``judge`` (see
    :func:`judge_as_they_come`), each outcome is judged as it comes back, while the sandbox runs the
    next program. The sandbox is left RUNNING: the caller ends the submission (for the next one) or
    closes it."""
    run = Run(submission, seed, scope)
    scenarios = plan.select(scope)
    queue = sorted(enumerate(scenarios), key=lambda item: (item[1].visibility is Visibility.HIDDEN,
                                                           item[1].has_inputs))
    timed_out_tasks: set[str] = set()

    def limit(scenario: ScenarioPlan) -> float:
        return min(scenario.time_limit, AFTER_A_TIMEOUT) if scenario.task in timed_out_tasks else scenario.time_limit

    position = 0
    while position < len(queue):
        sandbox.begin(Path(submission.module_file), submission.module_name, commands.job(plan),
                      source=(submission.module_text or "").encode("utf-8", "surrogatepass"), code=submission.code)
        imported = sandbox.runs.wait_ready(plan.limits.import_time)
        run.import_seconds += imported.duration
        run.isolation = run.isolation or sandbox.isolation
        _note_forbidden(run, sandbox)
        if not imported.ok:
            if position == 0:  # an import that worked before is the sandbox failing, not the file
                run.error = _import_problem(submission, imported)
            run.not_run.update((index, imported) for index, _ in queue[position:])
            break
        if position == 0:
            run.import_output = (imported.stdout, imported.stderr)
        runs = (RunRequest(index, limit(scenario), commands.run(index, scenario, inputs(scenario)),
                           hidden=scenario.visibility is Visibility.HIDDEN) for index, scenario in queue[position:])
        # Ends early when a run timed out or killed its zygote: the rest begin again in a fresh one.
        for index, outcome in sandbox.runs.run_all(runs):
            outcome.time_limit = limit(scenarios[index])
            if outcome.timed_out:
                timed_out_tasks.add(scenarios[index].task)
            run.outcomes[index] = outcome
            position += 1
            if judge is not None:
                _judge_waiting(run, judge)
            changed_parts(run, plan)  # the grader's own work (once), done while the next programs run
        _note_forbidden(run, sandbox)
    return run


def _judge_waiting(run: Run, judge: EarlyJudge) -> None:
    """Judge every outcome of ``run`` not judged yet (the one just in, and those that came before
    ``judge`` could judge them), while the sandbox runs the next programs; stop at the first it
    cannot judge yet (see :func:`judge_as_they_come`)."""
    for index in [index for index in run.outcomes if index not in run.judged]:
        verdict = judge(index, run.outcomes[index])
        if verdict is None:
            return
        run.judged[index] = verdict


def _note_forbidden(run: Run, sandbox: Sandbox) -> None:
    run.forbidden += [module for module in sandbox.forbidden_seen if module not in run.forbidden]


def _import_problem(submission: Submission, imported: ImportOutcome) -> str:
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


def judge_as_they_come(assignment: Callable[[], Assignment | None], seed: int, scope: Scope) -> EarlyJudge:
    """An :data:`EarlyJudge` for :func:`execute`: judges with ``assignment()``, the one the run will be
    judged with, once it is there (None: still loading; that outcome is judged in judge_run)."""
    def judge_early(index: int, outcome: RunOutcome) -> ScenarioResult | None:
        loaded = assignment()
        return None if loaded is None else _judged(loaded, loaded.select(scope)[index], seed, outcome)
    return judge_early


def judge_run(run: Run, assignment: Assignment) -> SubmissionResult:
    """The result of ``run``: every scenario of its scope judged (or taken as judged while it ran,
    by the same assignment), scores added up. In the grader."""
    from grader.judge import scenario_result
    from grader.results import Feedback, Status

    results = []
    for index, spec in enumerate(assignment.select(run.scope)):
        outcome = run.outcomes.get(index)
        failed_import = run.not_run.get(index)
        if outcome is not None:
            judged = run.judged.get(index)
            results.append(judged if judged is not None else _judged(assignment, spec, run.seed, outcome))
        elif run.submission.problem is not None or failed_import is None:
            results.append(scenario_result(spec, Status.NOT_RUN, Feedback(run.error or "not run")))
        else:  # the zygote meant to run it could not import the file again
            why = run.error or (f"not run: the submission could not be imported again "
                                f"({failed_import.problem or failed_import.error})")
            results.append(scenario_result(spec, Status.NOT_RUN, Feedback(
                why, stdout=failed_import.stdout, stderr=failed_import.stderr,
                traceback=failed_import.error.traceback if failed_import.error else None)))
    if run.submission.locate is not None:
        results = [_relocated(result, run.submission) for result in results]
    error = run.error
    if run.forbidden:
        error = (f"{run.submission.name} tried to import {run.forbidden[0]!r}, which this assignment "
                 f"does not allow{forbidden_because(assignment.forbidden_reason)}")
    return _result(assignment, run, tuple(results), error)


def _judged(assignment: Assignment, spec: ScenarioSpec, seed: int, outcome: RunOutcome) -> ScenarioResult:
    from grader.judge import judge
    return judge(spec, assignment.inputs(spec.id, seed), outcome, assignment.limits.memory_mb)


def _relocated(result: ScenarioResult, submission: Submission) -> ScenarioResult:
    """A result whose traceback names the student's file and place (``File "autodiff.ipynb", cell 7,
    line 3``) instead of the module the sandbox imported."""
    traceback = result.feedback.traceback
    if not traceback or submission.locate is None:
        return result
    from grader.formats.line_map import relocate_traceback
    locate = submission.locate
    where = relocate_traceback(traceback, submission.module_file, lambda line: f"{submission.name}, {locate(line)}")
    return replace(result, feedback=replace(result.feedback, traceback=where))


def _placed(change: ProvidedChange, locate: Callable[[int], str]) -> ProvidedChange:
    """A changed part with where the student finds it (``cell 4, lines 30-69``)."""
    if change.first_line is None or change.last_line is None:
        return change
    first, last = locate(change.first_line), locate(change.last_line)
    cell, _, line = first.rpartition(", line ")
    same_cell = cell and last.startswith(f"{cell}, line ")
    where = first if first == last else (f"{cell}, lines {line}-{last.rpartition(', line ')[2]}" if same_cell
                                         else f"{first} to {last}")
    return replace(change, where=where)


def _noted(scenarios: tuple[ScenarioResult, ...], changed: tuple[ProvidedChange, ...]) -> tuple[ScenarioResult, ...]:
    """Each task scenario that did not pass says that the changed provided code may be the cause,
    and names what was changed (wherever the result is shown: console, JSON, Gradescope, notebook)."""
    from grader.provided import may_be_the_cause
    note = may_be_the_cause(changed)
    return tuple(replace(s, feedback=replace(s.feedback, provided_note=note)) if not s.passed and s.max_points > 0
                 else s for s in scenarios)


def _result(assignment: Assignment, run: Run, scenarios: tuple[ScenarioResult, ...],
            error: str | None) -> SubmissionResult:
    from grader.results import SubmissionResult
    from grader.scoring import task_scores, total
    score, max_score = total(scenarios)
    if error is not None:
        score = 0.0
        scenarios = tuple(replace(s, points=0.0) for s in scenarios)
    timings = {"total": round(time.monotonic() - run.started, 6)}
    if run.submission.problem is None:
        timings = {"import": round(run.import_seconds, 6), **timings}
    changed = changed_parts(run, assignment)
    if run.submission.locate is not None:
        changed = tuple(_placed(change, run.submission.locate) for change in changed)
    if changed:
        scenarios = _noted(scenarios, changed)
    return SubmissionResult(
        assignment=assignment.id, assignment_digest=assignment.digest, submission=str(run.submission.path),
        submission_sha256=run.submission.sha256, seed=run.seed, visibility=run.scope, score=score,
        max_score=max_score, tasks=task_scores(assignment, scenarios), scenarios=scenarios,
        grader_version=__version__, isolation=run.isolation, timings=timings, error=error,
        import_stdout=run.import_output[0], import_stderr=run.import_output[1], provided_changes=changed,
        warnings=run.submission.warnings)
