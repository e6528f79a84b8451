"""Checking inside Jupyter: ``%load_ext grader`` then ``%grader check``, or ``grader.notebook.check()``.

The check is ``grader check --json`` on the notebook's file, run as a command (the same program,
the same sandbox, and nothing of the kernel's state: a notebook that patched numpy cannot
patch the grader's judging), shown as rich output: a table of the scenarios, the likely
misconceptions, each failure's details in a collapsible block, and the lines of the notebook that
were not graded. Needs IPython only to show it (the ``jupyter`` extra); the CLI never imports
this module.

Which file: the one given, else the notebook the kernel runs as its frontend tells it (VS Code's
``__vsc_ipynb_file__``, Jupyter's ``__session__`` or ``JPY_SESSION_NAME``); when no frontend says
(nbconvert, a plain IPython), the check refuses and asks for the name, rather than guess a file of
the folder (the notebook may be a copy, ``autodiff-Copy1.ipynb``). The grader checks the file on
disk, so in a notebook the check first asks the frontend to save (the classic Notebook, before
version 7, does on request; JupyterLab, Notebook 7 and VS Code do not run the request), waits for
the file to change, and when it does not, says so above the result: save, then check again.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import UsageError
from grader.records import record

if TYPE_CHECKING:
    from grader.results import SubmissionResult

SAVE_WAIT_SECONDS = 2.0
_SAVE_SCRIPT = "if (window.IPython && IPython.notebook) { IPython.notebook.save_checkpoint(); }"
USAGE = "usage: %grader check [NOTEBOOK] [--seed N] [--assignment DIR] [--task ID]"


@record
class CheckReport:
    """A check's outcome as Jupyter shows it (``_repr_html_``) and as text everywhere else."""

    result: SubmissionResult | None = None  # when the file could be checked
    title: str = ""
    problem: str | None = None        # why there is no result (a usage or spec error), as grader prints it
    notes: tuple[str, ...] = ()       # said above the result (the notebook could not be saved)

    def _repr_html_(self) -> str:
        from html import escape
        notes = "".join(f'<p style="color:#9a6700"><b>{escape(note)}</b></p>' for note in self.notes)
        if self.result is None:
            return f"{notes}<pre>{escape(self.problem or '')}</pre>"
        from grader.report.html import render_html
        return notes + render_html(self.result, title=self.title)

    def __repr__(self) -> str:
        notes = "".join(f"{note}\n" for note in self.notes)
        if self.result is None:
            return notes + (self.problem or "")
        from grader.report.console import render
        return notes + render(self.result, title=self.title)

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.all_passed


def check(notebook: str | os.PathLike | None = None, *, assignment: str | os.PathLike | None = None,
          seed: int | None = None, save: bool = True, namespace: dict | None = None,
          task: str | None = None) -> CheckReport:
    """Check ``notebook`` (default: the one this kernel runs) on the public scenarios; with
    ``task``, only that task's and the provided engine's (``grader check --task``)."""
    path = Path(notebook) if notebook is not None else find_notebook(namespace or _user_namespace())
    notes: tuple[str, ...] = ()
    if save and _in_a_notebook() and not save_and_wait(path):
        saved = time.strftime("%H:%M:%S", time.localtime(path.stat().st_mtime)) if path.exists() else "never"
        notes = (f"Could not save {path.name} for you, so this checks it as last saved ({saved}): save it "
                 f"(Ctrl-S or File > Save) and check again to include your latest edits.",)
    command = [sys.executable, "-m", "grader", "check", "--json", str(path)]
    if assignment is not None:
        command += ["--assignment", str(assignment)]
    if seed is not None:
        command += ["--seed", str(seed)]
    if task is not None:
        command += ["--task", task]
    run = subprocess.run(command, capture_output=True, text=True, check=False,
                         env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if run.returncode not in (0, 1):
        return CheckReport(problem=run.stderr.strip() or f"grader check ended with status {run.returncode}",
                           notes=notes)
    from grader.results import SubmissionResult
    document = json.loads(run.stdout)  # the native document: the result's fields and derived views
    result = SubmissionResult.from_dict({k: v for k, v in document.items() if k in SubmissionResult.field_names()})
    return CheckReport(result=result, title=_title(path, assignment), notes=notes)


def find_notebook(namespace: dict) -> Path:
    """The notebook this kernel runs, as its frontend tells it; a :class:`UsageError` asking for the
    name when no frontend says (nbconvert, a plain IPython) or the file it names is not there. Never
    a guess: a kernel running ``autodiff-Copy1.ipynb`` must not check the ``autodiff.ipynb`` beside it."""
    told = [name for name in (namespace.get("__vsc_ipynb_file__"), namespace.get("__session__"),
                              os.environ.get("JPY_SESSION_NAME")) if isinstance(name, str) and name.endswith(".ipynb")]
    for name in told:
        # JupyterLab tells the path from the server's root; the kernel runs in the notebook's folder.
        for candidate in (Path(name), Path(Path(name).name)):
            if candidate.is_file():
                return candidate
    if told:
        raise UsageError(f"Jupyter says this kernel runs {told[0]}, which is not in {Path.cwd()}: pass the "
                         f"notebook's path, e.g. %grader check {Path(told[0]).name}")
    here = sorted(path.name for path in Path.cwd().glob("*.ipynb"))[:3] or ["NAME.ipynb"]
    raise UsageError("cannot tell which notebook this kernel runs (Jupyter did not say, as under nbconvert or a "
                     f"plain IPython): pass its name: {' or '.join(f'%grader check {name}' for name in here)}")


def save_and_wait(path: Path, wait: float | None = None) -> bool:
    """Ask the frontend to save the notebook; whether the file changed within ``wait`` s (default
    :data:`SAVE_WAIT_SECONDS`)."""
    from IPython.display import Javascript, display
    wait = SAVE_WAIT_SECONDS if wait is None else wait
    before = path.stat().st_mtime_ns if path.exists() else None
    display(Javascript(_SAVE_SCRIPT))
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if path.exists() and path.stat().st_mtime_ns != before:
            time.sleep(0.05)  # let the frontend finish writing
            return True
        time.sleep(0.05)
    return False


def _in_a_notebook() -> bool:
    """A kernel with a frontend (ipykernel), not a terminal IPython or a plain interpreter."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def _user_namespace() -> dict:
    try:
        from IPython import get_ipython
    except ImportError:
        return {}
    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def _title(path: Path, assignment: str | os.PathLike | None) -> str:
    from grader.spec import SPEC_FILE
    from grader.spec_yaml import parse
    folder = Path(assignment) if assignment is not None else path.parent
    spec = folder / SPEC_FILE if (folder / SPEC_FILE).is_file() else Path.cwd() / SPEC_FILE
    try:
        title = parse(spec.read_text(encoding="utf-8"), str(spec)).get("title")
    except (OSError, ValueError):
        return ""
    return title if isinstance(title, str) else ""


def grader_magic(line: str, namespace: dict | None = None) -> CheckReport:
    """``%grader check [NOTEBOOK] [--seed N] [--assignment DIR] [--task ID]``."""
    words = shlex.split(line)
    if not words or words[0] != "check":
        return CheckReport(problem=USAGE)
    notebook, options, rest = None, {}, iter(words[1:])
    for word in rest:
        if word in ("--seed", "--assignment", "--task"):
            value = next(rest, None)
            if value is None:
                return CheckReport(problem=USAGE)
            options[word[2:]] = value
        elif notebook is None and not word.startswith("-"):
            notebook = word
        else:
            return CheckReport(problem=USAGE)
    seed = options.get("seed")
    if seed is not None and not seed.isdigit():
        return CheckReport(problem=USAGE)
    try:
        return check(notebook, assignment=options.get("assignment"), seed=int(seed) if seed else None,
                     namespace=namespace, task=options.get("task"))
    except UsageError as error:
        return CheckReport(problem=f"Error: {error}")


def load_ipython_extension(ipython) -> None:
    """``%load_ext grader``: registers the ``%grader`` line magic."""
    ipython.register_magic_function(lambda line: grader_magic(line, ipython.user_ns), "line", "grader")
