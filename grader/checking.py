"""``grader check`` as a library call: find the file and the assignment, grade the public scenarios."""

from __future__ import annotations

import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import UsageError
from grader.sandbox.launcher import Sandbox
from grader.spec import SPEC_FILE, Assignment, load_assignment
from grader.spec_yaml import parse

if TYPE_CHECKING:
    from grader.results import SubmissionResult


@dataclass(frozen=True)
class Located:
    submission: Path
    assignment_dir: Path


def locate(file: Path | None, assignment_dir: Path | None, cwd: Path | None = None) -> Located:
    """Resolve ``grader check [FILE] [--assignment DIR]``.

    The assignment is ``DIR``, else the folder of FILE when it holds an assignment.yaml, else the
    current folder. FILE defaults to the assignment's submission file in the current folder.
    """
    cwd = cwd or Path.cwd()
    if assignment_dir is None:
        near_file = file.parent if file is not None else None
        assignment_dir = near_file if near_file is not None and (near_file / SPEC_FILE).is_file() else cwd
    spec = assignment_dir / SPEC_FILE
    if not spec.is_file():
        where = "this folder" if assignment_dir.resolve() == cwd.resolve() else str(assignment_dir)
        raise UsageError(f"no {SPEC_FILE} in {where}: run grader check inside the exercise folder, "
                         f"or pass --assignment DIR")
    if file is None:
        name = parse(spec.read_text(encoding="utf-8"), str(spec)).get("submission")
        if not isinstance(name, str):
            load_assignment(assignment_dir)  # raises the precise spec error
        file = Path(name) if cwd == Path.cwd() else cwd / name  # shown as the student would type it
        if not (cwd / name).is_file():
            raise UsageError(f"{name} is not in {cwd}: run grader check where your {name} is, "
                             f"or pass it: grader check path/to/{name}")
    elif not file.is_file():
        raise UsageError(f"{file} does not exist")
    return Located(file, assignment_dir)


def run_check(located: Located, *, seed: int | None = None,
              sandbox: Sandbox | None = None) -> tuple[SubmissionResult, Assignment]:
    """Grade the public scenarios; returns the result and the assignment it was graded on.
    A ``sandbox`` given serves this one check, and the caller closes it (default: one of its own).

    The checks (and numpy) load in a thread while the sandbox already runs the programs, read
    from the files directly; the runner verifies they are the programs the assignment defines.
    """
    from grader.rubric import read_public_rubric
    from grader.runner import grade_submission, grade_with_loader

    rubric = read_public_rubric(located.assignment_dir)
    if rubric is None:  # something unusual in the files: load first, report precisely
        assignment = load_assignment(located.assignment_dir)
        return grade_submission(located.submission, assignment, seed=seed, sandbox=sandbox), assignment
    switch = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)  # while the loader imports, hand the driver the GIL promptly
    loading = _Loading(located.assignment_dir)
    try:
        result = grade_with_loader(located.submission, rubric, loading.result, seed=seed, sandbox=sandbox,
                                   started_job=loading.start, closing=True)
        return result, loading.result()
    finally:
        sys.setswitchinterval(switch)


class _Loading:
    """The assignment, loaded in a thread of its own once started (a plain thread: the
    executors of concurrent.futures cost ~10 ms to import, on the path to the sandbox's job)."""

    def __init__(self, directory: Path):
        self._directory = directory
        self._thread: threading.Thread | None = None
        self._outcome: tuple[Assignment | None, BaseException | None] = (None, None)

    def start(self) -> None:
        """Begin loading (once the sandbox has its job: until then the loader would slow us)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._load, name="grader-load", daemon=True)
            self._thread.start()

    def _load(self) -> None:
        try:
            import grader.judge  # noqa: F401  (judging's modules too, while the sandbox runs)
            self._outcome = (load_assignment(self._directory), None)
        except BaseException as error:  # handed to the thread that asks for the result
            self._outcome = (None, error)

    def result(self) -> Assignment:
        """The loaded assignment (starting the load if need be); re-raises what loading raised."""
        self.start()
        self._thread.join()
        assignment, error = self._outcome
        if error is not None:
            raise error
        return assignment
