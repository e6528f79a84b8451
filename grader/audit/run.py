"""Run an audit: the shell around the pure core (files, sandboxes, the clock, progress).

Everything is graded through the ordinary runner in sandboxes, in parallel: the reference on every
scenario for each seed, then the handout and every mutant on the first seed. Mutants run with each
scenario's time limit cut to ``MUTANT_TIME_FACTOR`` times the reference's slowest run of it (at least
``MUTANT_MIN_LIMIT`` s, at most the scenario's own limit), as mutation testers do: a mutant that loops
forever is killed by a timeout, without waiting out the full limit of every scenario.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import grader.audit.misconceptions as misconceptions
import grader.audit.mutants_file as mutants_file
import grader.audit.operators as operators
import grader.python_ast as python_ast
from grader.audit.analysis import analyse
from grader.audit.functions import functions
from grader.audit.mutant import Mutant
from grader.audit.report import AuditReport
from grader.audit.verdicts import ScenarioInfo
from grader.errors import SpecError, UsageError
from grader.executor import GradingJob, LocalExecutor
from grader.loading import find_solutions, load, read_plan
from grader.records import record
from grader.results import SubmissionResult
from grader.spec import SPEC_FILE, Assignment, ScenarioSpec
from grader.spec_yaml import SpecErrors, did_you_mean
from grader.version import __version__
from grader.visibility import Scope

DEFAULT_SEEDS = 20
MUTANT_TIME_FACTOR = 10.0
MUTANT_MIN_LIMIT = 1.0
PROVIDED = "provided"   # the provided code's task, when the assignment has no task of its own for it


@record
class AuditOptions:
    assignment_dir: Path
    solutions_dir: Path | None = None      # default: solutions/<id> found beside the exercises folder
    mutants_path: Path | None = None       # default: <solutions>/mutants.yaml when it exists
    seeds: int = DEFAULT_SEEDS
    seed: int = 0                          # the reference runs seeds seed .. seed+seeds-1; mutants run seed
    jobs: int = 1
    min_score: float | None = None         # 0..1: an automatic mutation score below it fails the audit
    mutants: bool = True                   # False: only the reference and the handout (grader release)


@dataclass
class AuditProgress:
    """What a progress display needs; ``run_audit`` calls back after each graded submission."""

    total: int
    done: int = 0
    phase: str = "reference"
    started: float = field(default_factory=time.monotonic)

    @property
    def eta(self) -> float | None:
        elapsed = time.monotonic() - self.started
        return elapsed / self.done * (self.total - self.done) if self.done else None


def run_audit(options: AuditOptions, on_progress: Callable[[AuditProgress], None] = lambda p: None) -> AuditReport:
    started = time.monotonic()
    assignment, solutions = load_audited(options.assignment_dir, options.solutions_dir)
    reference_path = solutions / assignment.submission
    reference = reference_path.read_text(encoding="utf-8")
    texts = scenario_texts(assignment)
    mutants, mutants_path = _all_mutants(options, assignment, solutions, reference, reference_path, texts)
    progress = AuditProgress(total=options.seeds + 1 + sum(m.equivalent is None for m in mutants))
    seeds = tuple(range(options.seed, options.seed + options.seeds))
    jobs = [GradingJob(f"reference@{seed}", reference_path, seed) for seed in seeds]
    by_seed = {g.job.seed: g.result for g in _graded(assignment, jobs, options.jobs, progress, on_progress)}
    reference_seconds = time.monotonic() - started
    progress.phase = "mutants" if mutants else "handout"
    with tempfile.TemporaryDirectory(prefix="grader-audit-") as work:
        jobs = [GradingJob("handout", options.assignment_dir / assignment.submission, options.seed)]
        jobs += _mutant_jobs(mutants, Path(work), assignment.submission, options.seed)
        graded = {g.job.key: g.result for g in _graded(_for_mutants(assignment, by_seed), jobs, options.jobs,
                                                         progress, on_progress)}
    scenarios = [_info(spec) for spec in assignment.scenarios]
    by_task = {task.id: task.functions for task in assignment.tasks}
    known = misconceptions.collect(texts)
    analysis = analyse(scenarios, [t.id for t in assignment.tasks], by_seed, graded.pop("handout"), mutants, graded,
                       known.used, by_task, options.seed, options.min_score, provided_task(assignment))
    total = time.monotonic() - started
    return AuditReport(
        assignment=assignment.id, title=assignment.title, assignment_digest=assignment.digest,
        submission=assignment.submission, reference_path=str(reference_path), reference_source=reference,
        tasks=tuple((t.id, t.title) for t in assignment.tasks), scenarios=tuple(scenarios), seeds=seeds,
        mutant_seed=options.seed, mutants_file=str(mutants_path) if mutants_path else None, analysis=analysis,
        misconception_keys=known.key_of(), provided_task=provided_task(assignment),
        timings={"reference": round(reference_seconds, 3), "mutants": round(total - reference_seconds, 3),
                 "total": round(total, 3)},
        grader_version=__version__)


def _all_mutants(options: AuditOptions, assignment: Assignment, solutions: Path, reference: str,
                 reference_path: Path, texts: dict[str, str]) -> tuple[list[Mutant], Path | None]:
    """The named mutants (when there is a mutants file) and the automatic ones; the file read."""
    if not options.mutants:
        return [], None
    path = options.mutants_path or (solutions / mutants_file.MUTANTS_FILE)
    if options.mutants_path is not None and not path.is_file():
        raise UsageError(f"the mutants file {path} does not exist")
    owner = {name: task.id for task in assignment.tasks for name in task.functions}
    automatic = operators.automatic_mutants(reference, owner, provided_task(assignment))
    if not path.is_file():
        return automatic, None
    named = mutants_file.read_mutants(path.read_text(encoding="utf-8"), str(path), reference, str(reference_path),
                                      assignment.id, [t.id for t in assignment.tasks], misconceptions.collect(texts))
    mutants_file.check_exclusions(named, [m.id for m in automatic])
    reasons = {e.id: e.reason for e in named.excluded}
    automatic = [replace(m, equivalent=reasons[m.id]) if m.id in reasons else m for m in automatic]
    return list(named.named) + automatic, path


def _mutant_jobs(mutants: list[Mutant], work: Path, submission: str, seed: int) -> list[GradingJob]:
    """Each mutant not excluded, written as ``work/mNNNN/<submission>`` (the module name students have)."""
    jobs = []
    for index, mutant in enumerate(m for m in mutants if m.equivalent is None):
        folder = work / f"m{index:04d}"
        folder.mkdir()
        (folder / submission).write_text(mutant.source, encoding="utf-8")
        jobs.append(GradingJob(mutant.id, folder / submission, seed))
    return jobs


def _graded(assignment: Assignment, jobs: list[GradingJob], workers: int, progress: AuditProgress,
            on_progress: Callable[[AuditProgress], None]):
    on_progress(progress)
    with LocalExecutor(assignment, workers) as executor:
        for graded in executor.grade(jobs, Scope.ALL):
            progress.done += 1
            on_progress(progress)
            yield graded


def _for_mutants(assignment: Assignment, reference: dict[int, SubmissionResult]) -> Assignment:
    """The assignment with each time limit cut for mutants (see the module doc)."""
    slowest: dict[str, float] = {}
    for result in reference.values():
        for scenario in result.scenarios:
            slowest[scenario.id] = max(slowest.get(scenario.id, 0.0), scenario.duration)
    specs = tuple(replace(spec, time_limit=min(spec.time_limit, max(MUTANT_MIN_LIMIT,
                                                                    MUTANT_TIME_FACTOR * slowest.get(spec.id, 0.0))))
                  for spec in assignment.scenarios)
    return replace(assignment, scenarios=specs)


def provided_task(assignment: Assignment) -> str:
    """The task the provided code's mutants are charged to: the one task that names no functions
    (its scenarios check the provided code), else ``provided``, a task of no scenario."""
    unnamed = [task.id for task in assignment.tasks if not task.functions]
    return unnamed[0] if len(unnamed) == 1 else PROVIDED


def load_audited(assignment_dir: Path, solutions_dir: Path | None) -> tuple[Assignment, Path]:
    """The assignment with its hidden scenarios, its functions checked against the handout and the
    reference (which must both exist), and its solutions folder."""
    solutions = solutions_dir or find_solutions(assignment_dir)
    submission = read_plan(assignment_dir).submission
    handout_path, reference_path = assignment_dir / submission, solutions / submission
    for path, what in ((reference_path, "the reference solution"), (handout_path, "the handout")):
        if not path.is_file():
            raise UsageError(f"{what} {path} does not exist ({submission} of the assignment)")
    assignment = load(read_plan(assignment_dir, solutions, handout=handout_path))
    in_reference = functions(python_ast.parse(reference_path.read_text(encoding="utf-8")))
    problems = [SpecError(str(assignment_dir / SPEC_FILE), None, f"tasks[{index}].functions",
                          f"{name!r} is not a function of the reference {reference_path}"
                          f"{did_you_mean(name, in_reference)}")
                for index, task in enumerate(assignment.tasks) for name in task.functions if name not in in_reference]
    if problems:
        raise SpecErrors(problems)
    return assignment, solutions


def scenario_texts(assignment: Assignment) -> dict[str, str]:
    """The scenario files' texts, as loaded (public and hidden), by path."""
    roles = {"scenarios": assignment.directory, "hidden_scenarios": assignment.hidden_directory}
    return {str(Path(roles[f.role] or ".") / f.name): f.data.decode("utf-8")
            for f in assignment.files if f.role in roles}


def _info(spec: ScenarioSpec) -> ScenarioInfo:
    return ScenarioInfo(spec.id, spec.title, spec.task, spec.points, spec.visibility.value, spec.time_limit, spec.file)
