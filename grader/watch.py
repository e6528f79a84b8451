"""``grader check --watch``: re-check the submission every time it is saved, in a warm sandbox.

The sandbox's interpreter (numpy imported) and the grader's own modules and assignment stay
loaded between runs, and the next zygote is started while nobody waits, so a re-check costs the
submission's import and the scenarios: see benchmarks/README.md. The files' stamps (a ``stat``
each) decide what changed: looked at as soon as the kernel reports a save in their folders
(inotify, :mod:`grader.file_events`), and on a timer whatever it reports, so that an editor's
write-to-a-temporary-then-rename, an in-place write and a folder that sends no event are all seen.
A save caught half-written is checked as it is, and checked again when the next write lands. The
assignment's own files are watched too: an edited spec is reloaded.
Ctrl-C ends it at once (the sandbox's processes are killed on the way out).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import GraderError
from grader.file_events import FolderEvents
from grader.records import record
from grader.sandbox.launcher import End, Sandbox
from grader.spec import SPEC_FILE

if TYPE_CHECKING:
    from grader.results import SubmissionResult
    from grader.spec import Assignment
    from grader.spec_cache import SpecCache

CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # cursor home, clear the screen, clear the scrollback
POLL_SECONDS = 0.005        # how often the stamps are looked at where the kernel reports no saves
EVENTS_POLL_SECONDS = 0.05  # and where it does (it wakes the watcher at once: the timer is a fallback)
View = Callable[["SubmissionResult | None", "Assignment | None", float, "str | None"], str]


@record
class Stamp:
    """What tells a file changed: its inode (a rename), size and modification time (ns)."""

    inode: int
    size: int
    mtime_ns: int


def stamp(path: Path) -> Stamp | None:
    try:
        found = os.stat(path)
    except OSError:  # between an editor's delete and its rename: not there for a moment
        return None
    return Stamp(found.st_ino, found.st_size, found.st_mtime_ns)


def assignment_files(folder: Path, submission: Path) -> tuple[Path, ...]:
    """The files whose change reloads the assignment: its spec and the Python files beside it
    (its scenarios among them), less the submission."""
    mine = submission.resolve()
    return tuple(path for path in [folder / SPEC_FILE, *sorted(folder.glob("*.py"))] if path.resolve() != mine)


def watch(file: Path | None, assignment_dir: Path | None, *, seed: int, sandbox: Sandbox,
          show: Callable[[str], None], render: View, clear: bool, cwd: Path | None = None,
          task: str | None = None) -> None:
    """Check now, then again on every change, until interrupted (KeyboardInterrupt goes up); with
    ``task``, only that task's scenarios (:func:`grader.checking.one_task`).

    ``render(result, assignment, seconds, problem)`` makes the text shown (``problem``: why the
    assignment could not be loaded, then no result); ``show`` writes it, the screen cleared first
    when ``clear``. A usage error (no such file, no such task) is raised before the first run."""
    import grader.commands as commands
    from grader.checking import assignment_folder, one_task, submission_file, trusted_cache
    from grader.loading import load_assignment, read_plan

    cwd = cwd or Path.cwd()
    folder = assignment_folder(file, assignment_dir, cwd)
    plan = read_plan(folder)
    if task is not None:
        one_task(plan, task)   # an unknown task is a usage error now, not a message on every save
    path = submission_file(file, plan, cwd)
    spec_files = assignment_files(folder, path)
    files = (path, *spec_files)

    def loaded() -> tuple[Assignment | None, str | None]:
        try:
            whole = load_assignment(folder)
            return (whole if task is None else one_task(whole, task)), None
        except GraderError as error:  # shown, and watched until it is fixed
            return None, str(error)

    seen = {each: stamp(each) for each in files}
    assignment, problem = loaded()
    cache = trusted_cache()
    with FolderEvents({each.parent for each in files}) as events:
        while True:
            started = time.monotonic()
            result = _check(path, assignment, seed, sandbox, cache) if assignment is not None else None
            show((CLEAR if clear else "") + render(result, assignment, time.monotonic() - started, problem))
            # Readied for the next save while nobody waits: a fresh zygote, waiting for it.
            sandbox.end(End.SUBMISSION)
            if assignment is not None:
                sandbox.prestart(commands.job(assignment))
            now = _wait_for_change(files, seen, events)
            if assignment is None or any(now[each] != seen[each] for each in spec_files):
                assignment, problem = loaded()
            seen = now


def _wait_for_change(files: tuple[Path, ...], seen: dict[Path, Stamp | None],
                     events: FolderEvents) -> dict[Path, Stamp | None]:
    """Block until a file's stamp changes (and the submission exists); the new stamps."""
    while True:
        events.wait(EVENTS_POLL_SECONDS if events.active else POLL_SECONDS)
        now = {path: stamp(path) for path in files}
        if now != seen and now[files[0]] is not None:
            return now


def _check(path: Path, assignment: Assignment, seed: int, sandbox: Sandbox, cache: SpecCache | None
           ) -> SubmissionResult:
    """Grade the public scenarios, as ``grader check`` does; the submission is left to end later."""
    from grader.formats import ReadContext
    from grader.runner import Run, execute, judge_as_they_come, judge_run
    from grader.submission import read_submission
    from grader.visibility import Scope

    submission = read_submission(path, assignment.forbidden_imports, ReadContext.of(assignment, cache))
    if submission.problem is not None:
        return judge_run(Run(submission, seed, Scope.PUBLIC, error=submission.problem), assignment)
    run = execute(submission, assignment, sandbox, seed=seed, scope=Scope.PUBLIC,
                  inputs=lambda planned: assignment.inputs(planned.id, seed),
                  judge=judge_as_they_come(lambda: assignment, seed, Scope.PUBLIC))
    return judge_run(run, assignment)


def console_view(*, colours: bool, verbose: bool) -> View:
    """The console report of each run, and a line saying what is watched."""
    from grader.report.console import render

    def view(result: SubmissionResult | None, assignment: Assignment | None, seconds: float,
             problem: str | None) -> str:
        if result is not None:
            text = render(result, title=assignment.title if assignment else "", colours=colours, verbose=verbose)
        else:
            text = "".join(f"Error: {line}\n" for line in (problem or "").splitlines())
        name = Path(result.submission).name if result is not None else "the assignment"
        return (f"{text}\nChecked in {seconds:.2f} s at {time.strftime('%H:%M:%S')}. Watching {name}: save to "
                f"check again, Ctrl-C to stop.\n")
    return view
