"""``grader release``: build the student handout zip, and prove it leaks nothing.

The handout is the exercise folder (the submission file as students start from it, the README, the
public scenarios and their spec, and anything else in the folder but caches and dotfiles), as a zip
under ``<assignment id>/``, with what students need to run ``grader check``: the grader's own wheel
(:mod:`grader.wheel`) and, in the README, a section with the one command that installs it
(:func:`install_section`). Nothing is written when :func:`grader.leaks.find_leaks` finds a secret in
a file, or when the audit's basic guarantees fail (the reference earns every point on every seed, the
handout none): :class:`ReleaseRefused` lists every problem.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import grader.atomic as atomic
from grader.audit.verdicts import FindingKind
from grader.errors import GraderError
from grader.leaks import find_leaks, secrets_of
from grader.records import record

# The audit's findings that make a release refuse: the reference is not full, the handout earns points.
BASIC_GUARANTEES = (FindingKind.REFERENCE_FAILS, FindingKind.FLAKY, FindingKind.FREE_POINTS)
SKIPPED = re.compile(r"(^|/)(__pycache__|\.[^/]*)(/|$)|\.py[co]$")   # caches and dotfiles are never released
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)   # fixed: the same folder gives the same zip, byte for byte
README = "README.md"


class ReleaseRefused(GraderError):
    """The handout was not built; ``problems`` says why, one line each."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


def zip_bytes(prefix: str, files: list[tuple[str, bytes]]) -> bytes:
    """A deterministic zip of ``files`` under ``prefix/`` (sorted, fixed dates and modes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in sorted(files):
            info = zipfile.ZipInfo(f"{prefix}/{path}", _ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


# --------------------------------------------------------------------------- shell

@record
class Released:
    out: Path
    files: tuple[str, ...]
    seeds: int


def release(assignment_dir: Path, out: Path, *, solutions_dir: Path | None = None, seeds: int = 20,
            jobs: int = 1, on_progress=lambda progress: None, github_classroom: bool = False) -> Released:
    """Check and build the handout zip of the assignment in ``assignment_dir`` (see the module doc);
    ``github_classroom``: with GitHub Classroom's workflow (:mod:`grader.classroom_workflow`)."""
    from grader.audit.run import AuditOptions, load_audited, run_audit, scenario_texts
    from grader.visibility import Visibility

    assignment, solutions = load_audited(assignment_dir, solutions_dir)
    released = list(_folder_files(assignment_dir))
    hidden_specs = [s for s in assignment.scenarios if s.visibility is Visibility.HIDDEN]
    hidden_files = {s.file for s in hidden_specs}
    texts = scenario_texts(assignment)
    hidden_file = next(((path, text) for path, text in texts.items() if path in hidden_files), None)
    reference_path = solutions / assignment.submission
    reference = (str(reference_path), reference_path.read_text(encoding="utf-8"))
    names = [name for task in assignment.tasks for name in task.functions]
    solution_files = [(str(p.relative_to(solutions.parent)), p.read_bytes()) for p in sorted(solutions.rglob("*"))
                      if p.is_file() and not SKIPPED.search(str(p.relative_to(solutions)))]
    secrets = secrets_of([(s.id, s.title) for s in hidden_specs], hidden_file, reference, names, solution_files)
    problems = [str(leak) for leak in find_leaks(released, secrets)]
    report = run_audit(AuditOptions(assignment_dir, solutions_dir=solutions, seeds=seeds, jobs=jobs, mutants=False),
                       on_progress)
    problems += [f"audit: {finding.message}" for finding in report.analysis.findings
                 if finding.kind in BASIC_GUARANTEES]
    if problems:
        raise ReleaseRefused(problems)
    released = with_the_grader(released, assignment.submission,
                               classroom_id=assignment.id if github_classroom else None)
    atomic.write_bytes(out, zip_bytes(assignment.id, released))  # a reader sees the old zip or the new one
    return Released(out, tuple(path for path, _ in sorted(released)), seeds)


def with_the_grader(files: list[tuple[str, bytes]], submission: str,
                    classroom_id: str | None = None) -> list[tuple[str, bytes]]:
    """The handout's files with the grader's wheel beside them and, in ``README.md`` (made when
    the folder has none), the section that says how to install it; with ``classroom_id`` (the
    grading step's id), GitHub Classroom's workflow too."""
    from grader.wheel import build_wheel
    wheel_name, wheel = build_wheel()
    names = {path for path, _ in files}
    notebook = f"{submission.rsplit('.', 1)[0]}.ipynb"
    section = install_section(wheel_name, submission, notebook if notebook in names else None,
                              github_classroom=classroom_id is not None)
    readme = dict(files).get(README, b"").decode("utf-8")
    added = [(wheel_name, wheel), (README, add_section(readme, section).encode())]
    if classroom_id is not None:
        from grader.classroom_workflow import WORKFLOW_PATH, classroom_workflow
        added.append((WORKFLOW_PATH, classroom_workflow(classroom_id, submission, wheel_name).encode()))
    ours = {path for path, _ in added}
    return [*((path, content) for path, content in files if path not in ours), *added]


def install_section(wheel_name: str, submission: str, notebook: str | None = None,
                    github_classroom: bool = False) -> str:
    """The README section of a handout: the one command that installs the grader from the wheel
    beside it, with the notebook extra, the same on Linux, macOS and Windows (in WSL), and how to
    run it after (and, ``github_classroom``, what every push runs). Pure."""
    checks = f"`.venv/bin/grader check` checks `{submission}`" + (
        f", and `.venv/bin/grader check {notebook}` the notebook" if notebook else "")
    pushed = (f"""
Every push to your repository also runs `grader check {submission}` on GitHub (the workflow in
`.github/workflows/classroom.yml`) and sends the points of the public scenarios to GitHub Classroom;
the run's log (the Actions tab) shows the same report as your terminal.
""" if github_classroom else "")
    return f"""## Installing the grader

`grader check` comes with this folder: `{wheel_name}` is the grader. It needs Python 3.11 or
newer (`python3 --version` tells; the one macOS comes with is older: install a newer one from
python.org or Homebrew), on Linux, macOS, or Windows in WSL (open the WSL terminal, not PowerShell).
From this folder, in a terminal, run once:

```sh
{install_command(wheel_name)}
```

It makes a virtual environment, `.venv`, in this folder (nothing else on your machine changes) and
installs the grader there with what it needs (numpy, click, pyyaml, and nbformat for notebooks, from
the Python Package Index). Then {checks}; after `source .venv/bin/activate` in a terminal,
`grader check` alone does. For `%grader check` inside Jupyter, install the grader where the
notebook's kernel runs: run `%pip install "./{wheel_name}[jupyter]"` in a cell of the notebook.
{pushed}"""


def install_command(wheel_name: str) -> str:
    """The command a student runs in the handout's folder to install the grader (with the notebook extra)."""
    return f'python3 -m venv .venv && .venv/bin/python -m pip install "./{wheel_name}[notebook]"'


def add_section(readme: str, section: str) -> str:
    """``readme`` with ``section`` before its first second-level heading (after its title and its
    introduction), else at its end; ``section`` alone for an empty one."""
    if not readme.strip():
        return section
    at = readme.find("\n## ")
    if at < 0:
        return f"{readme.rstrip()}\n\n{section}"
    return f"{readme[:at + 1]}{section}\n{readme[at + 1:]}"


def _folder_files(folder: Path) -> Iterator[tuple[str, bytes]]:
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if path.is_file() and not SKIPPED.search(relative):
            yield relative, path.read_bytes()
