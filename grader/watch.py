"""``grader check --watch``: re-check the submission every time it is saved, in a warm sandbox.

The sandbox's interpreter (numpy imported) and the grader's own modules and assignment stay
loaded between runs, so a re-check costs a zygote's fork, the submission's import and the
scenarios: see benchmarks/README.md. The files are polled (a ``stat`` each, every few ms: no
watcher library, and it sees an editor's write-to-a-temporary-then-rename as well as an
in-place write). A save caught half-written is checked as it is, and checked again when the
next write lands. The assignment's own files are watched too: an edited spec is reloaded.
Ctrl-C ends it at once (the sandbox's processes are killed on the way out).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from grader.checking import Located
from grader.errors import GraderError
from grader.sandbox.launcher import Sandbox
from grader.spec import SPEC_FILE, Assignment, load_assignment

if TYPE_CHECKING:
    from grader.results import SubmissionResult

CLEAR = "\x1b[H\x1b[2J\x1b[3J"  # cursor home, clear the screen, clear the scrollback
POLL_SECONDS = 0.005


@dataclass(frozen=True)
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


def assignment_files(located: Located) -> tuple[Path, ...]:
    """The files whose change reloads the assignment: its spec and the Python files beside it
    (its scenarios among them), less the submission."""
    folder = located.assignment_dir
    submission = located.submission.resolve()
    return tuple(path for path in [folder / SPEC_FILE, *sorted(folder.glob("*.py"))] if path.resolve() != submission)


def watch(located: Located, *, seed: int, sandbox: Sandbox, show: Callable[[str], None],
          render: Callable[[SubmissionResult | None, Assignment | None, float, str | None], str],
          clear: bool, check: Callable | None = None) -> None:
    """Check now, then again on every change, until interrupted (KeyboardInterrupt goes up).

    ``render(result, assignment, seconds, problem)`` makes the text shown (``problem``: why the
    assignment could not be loaded, then no result); ``show`` writes it, the screen cleared first
    when ``clear``. ``check(located, assignment, seed, sandbox)`` grades once (default: the
    public scenarios, as ``grader check``)."""
    check = check or _check
    spec_files = assignment_files(located)
    files = (located.submission, *spec_files)
    seen = {path: stamp(path) for path in files}
    assignment, problem = _load(located)
    while True:
        started = time.monotonic()
        result = check(located, assignment, seed, sandbox) if assignment is not None else None
        show((CLEAR if clear else "") + render(result, assignment, time.monotonic() - started, problem))
        now = _wait_for_change(files, seen)
        if any(now[path] != seen[path] for path in spec_files) or assignment is None:
            assignment, problem = _load(located)
        seen = now


def _load(located: Located) -> tuple[Assignment | None, str | None]:
    try:
        return load_assignment(located.assignment_dir), None
    except GraderError as error:  # shown, and watched until it is fixed
        return None, str(error)


def _wait_for_change(files: tuple[Path, ...], seen: dict[Path, Stamp | None]) -> dict[Path, Stamp | None]:
    """Block until a file's stamp changes (and the submission exists); the new stamps."""
    while True:
        time.sleep(POLL_SECONDS)
        now = {path: stamp(path) for path in files}
        if now != seen and now[files[0]] is not None:
            return now


def _check(located: Located, assignment: Assignment, seed: int, sandbox: Sandbox) -> SubmissionResult:
    from grader.runner import grade_submission
    return grade_submission(located.submission, assignment, seed=seed, sandbox=sandbox)


def console_view(*, colours: bool, verbose: bool) -> Callable[..., str]:
    """The console report of each run, and a line saying what is watched."""
    from grader.report.console import render

    def view(result: SubmissionResult | None, assignment: Assignment | None, seconds: float,
             problem: str | None) -> str:
        text = render(result, title=assignment.title, colours=colours, verbose=verbose) if result is not None \
            else "".join(f"Error: {line}\n" for line in (problem or "").splitlines())
        name = Path(result.submission).name if result is not None else "the assignment"
        return (f"{text}\nChecked in {seconds:.2f} s at {time.strftime('%H:%M:%S')}. Watching {name}: save to "
                f"check again, Ctrl-C to stop.\n")
    return view
