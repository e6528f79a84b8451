"""``grader check`` as a library call: find the file and the assignment, grade the public scenarios
(of one task, with ``--task``).

The sandbox runs the programs from the assignment's plan while a thread loads the checks
(:class:`~grader.loading.Loading`); both come from one reading of the files.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from grader.errors import UsageError
from grader.formats import ReadContext
from grader.loading import Loading, load, read_plan
from grader.records import record
from grader.runner import Run, execute, judge_as_they_come, judge_run, new_seed
from grader.sandbox.landlock import abi_version
from grader.sandbox.launcher import End, Sandbox
from grader.spec import SPEC_FILE, Assignment, Plan
from grader.spec_cache import SpecCache
from grader.submission import read_submission
from grader.visibility import Scope

if TYPE_CHECKING:
    from grader.results import SubmissionResult

P = TypeVar("P", bound=Plan)


@record
class Checked:
    """A ``grader check`` done: the result, the assignment it was checked against, the file."""

    result: SubmissionResult
    assignment: Assignment
    submission: Path


def assignment_folder(file: Path | None, assignment_dir: Path | None, cwd: Path) -> Path:
    """The assignment of ``grader check [FILE] [--assignment DIR]``: DIR, else the folder of FILE when
    it holds an assignment.yaml, else the current folder."""
    if assignment_dir is None:
        near_file = file.parent if file is not None else None
        assignment_dir = near_file if near_file is not None and (near_file / SPEC_FILE).is_file() else cwd
    if not (assignment_dir / SPEC_FILE).is_file():
        where = "this folder" if assignment_dir.resolve() == cwd.resolve() else str(assignment_dir)
        raise UsageError(f"no {SPEC_FILE} in {where}: run grader check inside the exercise folder, "
                         f"or pass --assignment DIR")
    return assignment_dir


def submission_file(file: Path | None, plan: Plan, cwd: Path) -> Path:
    """FILE, else the assignment's submission file in the current folder (as the student would type it)."""
    if file is None:
        name = plan.submission
        if not (cwd / name).is_file():
            raise UsageError(f"{name} is not in {cwd}" + _nearby(cwd, name, name) + f": run grader check where "
                             f"your {name} is, or pass it: grader check path/to/{name}")
        return Path(name) if cwd == Path.cwd() else cwd / name
    if not file.is_file():
        raise UsageError(f"{file} does not exist" + _nearby(cwd / file.parent, file.name, plan.submission))
    return file


def _nearby(folder: Path, wanted: str, submission: str) -> str:
    """What the student may have meant, from the files in ``folder``: a copy ``grade`` would take as
    the submission (``autodiff (1).py``, a browser's second download), and "did you mean" for a slip
    of the keyboard (``autodif.py``); "" when nothing is near. Only on this error path (it lists
    the folder)."""
    import difflib
    import shlex

    from grader.discovery import DEFAULT_SUFFIXES
    from grader.lms_names import Role, role_of
    try:
        names = sorted(entry.name for entry in folder.iterdir() if entry.is_file())
    except OSError:
        return ""
    # A copy is worth naming only where the submission itself is not: with both, grade takes neither.
    copies = [] if submission in names else [
        name for name in names if role_of(name, submission, DEFAULT_SUFFIXES) is Role.SUBMISSION]
    close = [name for name in difflib.get_close_matches(wanted, names, n=3, cutoff=0.75) if name not in copies]
    said = []
    if close:
        said.append(f"did you mean {' or '.join(shlex.quote(name) for name in close)}?")
    if copies:
        listed = ", ".join(shlex.quote(name) for name in copies)
        said.append(f"{listed} {'is' if len(copies) == 1 else 'are'} here, which grader grade would take as "
                    f"{submission}: grader check {listed.split(', ')[0]}")
    return f" ({'; '.join(said)})" if said else ""


def run_check(file: Path | None, assignment_dir: Path | None, *, sandbox: Sandbox, seed: int | None = None,
              cwd: Path | None = None, task: str | None = None) -> Checked:
    """Grade FILE on the assignment's public scenarios in ``sandbox`` (which the caller closes);
    with ``task``, only that task's and the provided engine's (:func:`one_task`)."""
    cwd = cwd or Path.cwd()
    cache = trusted_cache()
    whole = read_plan(assignment_folder(file, assignment_dir, cwd), cache=cache)
    plan = whole if task is None else one_task(whole, task)
    path = submission_file(file, plan, cwd)
    submission = read_submission(path, plan.forbidden_imports, ReadContext.of(plan, cache))
    seed = new_seed() if seed is None else seed
    if submission.problem is not None:
        assignment = _narrowed(load(whole), task)
        return Checked(judge_run(Run(submission, seed, Scope.PUBLIC, error=submission.problem), assignment),
                       assignment, path)
    with Loading(whole, cache) as loading:   # the whole assignment loads (its files list every scenario)
        narrowed: list[Assignment] = []

        def loaded() -> Assignment | None:
            if not narrowed and loading.loaded() is not None:
                narrowed.append(_narrowed(loading.assignment(), task))
            return narrowed[0] if narrowed else None

        def inputs(planned) -> dict:
            return _narrowed_now(loaded, loading).inputs(planned.id, seed) if planned.has_inputs else {}

        run = execute(submission, plan, sandbox, seed=seed, scope=Scope.PUBLIC, inputs=inputs,
                      judge=judge_as_they_come(loaded, seed, Scope.PUBLIC))
        sandbox.end(End.KILL)  # nothing more runs in it: it dies while we judge, the caller closes it
        assignment = _narrowed_now(loaded, loading)
    return Checked(judge_run(run, assignment), assignment, path)


def one_task(plan: P, task_id: str) -> P:
    """``plan`` (or an assignment) with only the scenarios of the task ``task_id`` and of the tasks
    that carry no points (the provided engine's checks, which say whether a failure is the task's);
    a :class:`UsageError` with "did you mean" for a task the spec does not have."""
    known = [task.id for task in plan.tasks]
    if task_id not in known:
        from grader.spec_yaml import did_you_mean
        raise UsageError(f"--task {task_id}: {SPEC_FILE} has no such task{did_you_mean(task_id, known)}; its tasks "
                         f"are {', '.join(known)}")
    worthless = {task.id for task in plan.tasks
                 if all(s.points == 0 for s in plan.scenarios if s.task == task.id)}
    return dataclasses.replace(plan, scenarios=tuple(s for s in plan.scenarios
                                                     if s.task == task_id or s.task in worthless))


def _narrowed(assignment: Assignment, task: str | None) -> Assignment:
    return assignment if task is None else one_task(assignment, task)


def _narrowed_now(loaded, loading: Loading) -> Assignment:
    """The (narrowed) assignment, waiting for it to load (re-raising what loading raised)."""
    loading.assignment()
    found = loaded()
    assert found is not None
    return found


def trusted_cache() -> SpecCache | None:
    """The spec cache, where no submission can have written it: the sandbox runs as a user of its own
    (the grader runs as root) or under Landlock (it writes its job folder only). Else None: parse."""
    cache = SpecCache.default()
    if os.geteuid() != 0:
        if abi_version() < 1:
            return None
    try:
        if cache.folder.exists() and cache.folder.stat().st_mode & 0o002:
            return None  # a folder anyone may write into holds nothing we trust
    except OSError:
        return None
    return cache
