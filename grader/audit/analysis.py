"""From graded results to the audit's verdicts: kill matrix, scores, diagnoses, findings. Pure.

Definitions (the README's audit section says the same to instructors):

- A mutant is *killed* when at least one scenario does not pass on it; the cell of the kill matrix says
  how (``failed``: a check failed; ``error``; ``timeout``).
- A *cross-task charge*: a mutant of task T loses points in a scenario of another task (one it does not
  declare in ``may_cost``).
- The *diagnosis* of a killed named mutant: the misconceptions its failed scenarios name. ``named``:
  only misconceptions the mutant lists, at least one; ``wrong``: some other one; ``none``: none at all.
- The *mutation score* of a task: killed automatic mutants over the automatic mutants not excluded
  as equivalent.
"""

from __future__ import annotations

from grader.audit.findings import mutant_findings, points_text
from grader.audit.mutant import Kind, Mutant
from grader.audit.verdicts import (
    Analysis,
    Cell,
    Charge,
    Diagnosis,
    Finding,
    FindingKind,
    MutantOutcome,
    MutantStatus,
    ReferenceScenario,
    ScenarioInfo,
    Severity,
    TaskScore,
    Verdict,
    cell_of,
)
from grader.results import SubmissionResult

MARGIN = 5.0   # a scenario's time limit must be this many times the reference's slowest run


def analyse(scenarios: list[ScenarioInfo], tasks: list[str], reference: dict[int, SubmissionResult],
            handout: SubmissionResult, mutants: list[Mutant], results: dict[str, SubmissionResult],
            used_misconceptions: frozenset[str], task_functions: dict[str, tuple[str, ...]],
            mutant_seed: int, min_score: float | None = None, provided_task: str | None = None) -> Analysis:
    """Everything the audit reports. ``reference`` maps each seed to the reference's result; ``results``
    holds each mutant's result by id (equivalent mutants have none), graded with ``mutant_seed``;
    ``task_functions`` the functions each task names; ``min_score`` (0..1) makes a lower automatic
    mutation score a failure; ``provided_task`` is the task the provided code's mutants belong to.

    A scenario the reference itself does not pass on ``mutant_seed`` kills no mutant and charges
    no task: its cells are shown, but a mutant failing it tells nothing about the mutant."""
    by_id = {s.id: s for s in scenarios}
    findings: list[Finding] = []
    reference_rows = _reference(scenarios, reference, findings)
    free, handout_score = _handout(by_id, handout, findings)
    baseline = {s.id for s in reference[mutant_seed].scenarios if s.passed} if mutant_seed in reference else set(by_id)
    outcomes = tuple(_outcome(m, results.get(m.id), by_id, baseline, provided_task) for m in mutants)
    findings += mutant_findings(outcomes, by_id, used_misconceptions, {sid for sid, _ in free}, provided_task)
    killers = {sid for outcome in outcomes for sid in outcome.killed_by}
    for scenario in scenarios:
        if mutants and scenario.id not in killers:
            findings.append(Finding(FindingKind.KILLS_NOTHING, scenario.id,
                                    f"scenario {scenario.id} ({scenario.task}) fails on no mutant",
                                    "it checks nothing any mutant breaks: strengthen its check, or add the "
                                    "mutant it was written to catch"))
    if provided_task is not None and provided_task not in tasks and any(m.task == provided_task for m in mutants):
        tasks = [*tasks, provided_task]   # the provided code's mutants, scored as a task of their own
    scores = tuple(_task_score(task, outcomes) for task in tasks)
    for task in tasks:
        if not task_functions.get(task) and any(s.task == task and s.points > 0 for s in scenarios):
            findings.append(Finding(FindingKind.NO_FUNCTIONS, task, f"task {task} names no functions, so it has "
                                    "no automatic mutants", f"list the student's functions of {task} in "
                                    "assignment.yaml: functions: [...]"))
    for score in scores:
        if min_score is not None and score.score is not None and score.score < min_score:
            findings.append(Finding(FindingKind.LOW_SCORE, score.task, f"task {score.task}'s mutation score is "
                                    f"{score.score:.0%}, below the required {min_score:.0%}",
                                    "kill the surviving automatic mutants listed above, or exclude the ones "
                                    "that are equivalent in mutants.yaml (equivalent:)"))
    order = {kind: index for index, kind in enumerate(FindingKind)}
    findings.sort(key=lambda f: (f.severity is not Severity.FAIL, order[f.kind]))
    return Analysis(tuple(reference_rows), free, handout_score, outcomes, scores, tuple(findings), frozenset(baseline))


def _reference(scenarios: list[ScenarioInfo], reference: dict[int, SubmissionResult],
               findings: list[Finding]) -> list[ReferenceScenario]:
    rows = []
    seeds = sorted(reference)
    for scenario in scenarios:
        passed, failed, slowest = [], [], 0.0
        for seed in seeds:
            result = next((r for r in reference[seed].scenarios if r.id == scenario.id), None)
            if result is not None and result.passed:
                passed.append(seed)
            else:
                summary = result.feedback.summary if result is not None else "not run"
                failed.append((seed, (cell_of(result.status) if result else Cell.ERROR).value,
                               reference[seed].error or summary))
            if result is not None:
                slowest = max(slowest, result.duration)
        row = ReferenceScenario(scenario.id, tuple(passed), tuple(failed), slowest, scenario.time_limit)
        rows.append(row)
        if failed and passed:
            shown = ", ".join(str(seed) for seed, _, _ in failed[:5]) + (", ..." if len(failed) > 5 else "")
            findings.append(Finding(FindingKind.FLAKY, scenario.id, f"scenario {scenario.id}'s verdict on the "
                                    f"reference changes with the seed: it fails on {len(failed)} of {len(seeds)} "
                                    f"seeds ({shown}): {failed[0][2]}",
                                    f"its inputs sometimes make a case its check gets wrong: reproduce it with "
                                    f"seed {failed[0][0]} and fix the inputs or the check"))
        elif failed:
            findings.append(Finding(FindingKind.REFERENCE_FAILS, scenario.id, f"the reference fails scenario "
                                    f"{scenario.id} on every seed: {failed[0][2]}",
                                    "fix the scenario's program or check (or the reference): the reference "
                                    "must earn every point"))
        if row.margin < MARGIN:
            needed = MARGIN * row.slowest
            findings.append(Finding(FindingKind.TIGHT_TIME, scenario.id, f"scenario {scenario.id}'s slowest "
                                    f"reference run took {row.slowest:.3g} s of its {scenario.time_limit:g} s "
                                    f"limit ({row.margin:.1f}x, under {MARGIN:g}x)",
                                    f"raise its time_limit to at least {needed:.2g} s, or make its program "
                                    "lighter, so a loaded machine does not time out a right answer"))
    return rows


def _handout(by_id: dict[str, ScenarioInfo], handout: SubmissionResult,
             findings: list[Finding]) -> tuple[tuple[tuple[str, float], ...], float]:
    free = tuple((s.id, s.points) for s in handout.scenarios if s.passed and s.points > 0)
    for sid, points in free:
        findings.append(Finding(FindingKind.FREE_POINTS, sid, f"the handout, as students receive it, earns "
                                f"{points_text(points)} in scenario {sid} ({by_id[sid].task})",
                                "make its check fail unless the task is done (it passes on the untouched "
                                "stub), or give it 0 points"))
    return free, handout.score


def _outcome(mutant: Mutant, result: SubmissionResult | None, by_id: dict[str, ScenarioInfo],
             baseline: set[str], provided_task: str | None) -> MutantOutcome:
    if result is None:
        return MutantOutcome(mutant, MutantStatus.EQUIVALENT)
    cells = {s.id: cell_of(s.status) for s in result.scenarios}
    killed_by = tuple(sid for sid, cell in cells.items() if cell is not Cell.PASSED and sid in baseline)
    provided = mutant.task == provided_task
    lost: dict[str, list[str]] = {}
    costs: dict[str, float] = {}
    noted: list[str] = []
    unnoted: list[str] = []
    for s in result.scenarios:
        if s.passed or s.max_points == 0 or s.id not in baseline:
            continue
        costs[s.task] = costs.get(s.task, 0.0) + s.max_points
        if provided and s.task != mutant.task:
            (noted if s.feedback.provided_note else unnoted).append(s.id)
        # A mutant of the provided code may cost a task's points where that scenario's control shows
        # the provided code itself gets the program wrong: the task cannot be judged there, and it says so.
        said = provided and s.feedback.control_failed
        if s.task != mutant.task and s.task not in mutant.may_cost and not said:
            lost.setdefault(s.task, []).append(s.id)
    charges = tuple(Charge(task, sum(by_id[sid].points for sid in sids), tuple(sids)) for task, sids in lost.items())
    diagnosis = None
    if killed_by:
        failed = [s for s in result.scenarios if s.id in killed_by and s.feedback.misconception]
        named = tuple((s.id, s.feedback.misconception or "") for s in failed)
        controls = tuple(s.id for s in failed if s.feedback.control_failed)
        if mutant.kind is Kind.NAMED:
            wrong = [m for _, m in named if m not in mutant.misconceptions]
            verdict = Verdict.WRONG if wrong else Verdict.NAMED if named else Verdict.NONE
        else:
            verdict = Verdict.TO_JUDGE if len(named) > len(controls) else Verdict.NONE
        diagnosis = Diagnosis(verdict, named, controls)
    status = MutantStatus.KILLED if killed_by else MutantStatus.SURVIVED
    return MutantOutcome(mutant, status, cells, killed_by, sum(costs.values()), charges, diagnosis, result.error,
                         tuple(Charge(task, points, ()) for task, points in costs.items()),
                         tuple(noted) if provided else None, tuple(unnoted))


def _task_score(task: str, outcomes: tuple[MutantOutcome, ...]) -> TaskScore:
    mine = [o for o in outcomes if o.mutant.task == task]
    named = [o for o in mine if o.mutant.kind is Kind.NAMED]
    automatic = [o for o in mine if o.mutant.kind is Kind.AUTOMATIC]
    equivalent = [o for o in automatic if o.status is MutantStatus.EQUIVALENT]
    return TaskScore(task, sum(o.status is MutantStatus.KILLED for o in named), len(named),
                     sum(o.status is MutantStatus.KILLED for o in automatic), len(automatic) - len(equivalent),
                     len(equivalent))
