"""The Gradescope autograder: the zip an instructor uploads, and the run inside Gradescope.

``build_package`` writes ``autograder.zip``::

    setup.sh          installs the grader from the wheel below (its dependencies from the registry)
    run_autograder    grades /autograder/submission/ into /autograder/results/results.json
    wheels/autodiff_grader-<version>-py3-none-any.whl
    assignment/       assignment.yaml and the public scenario file
    solutions/        hidden.yaml and the hidden scenario file (never the reference solution)

``run_in_gradescope`` is what ``run_autograder`` calls (``grader gradescope-run``). The root folder
is ``/autograder`` unless ``GRADER_AUTOGRADER_ROOT`` says otherwise (tests lay out a temporary one).

Three Gradescope rules shape what is here (its autograder documentation: specs and troubleshooting):

- "Regrade all" reruns every submission: the scenarios' random inputs must not change, so the seed
  is fixed per assignment (:func:`assignment_seed`, derived from the assignment's digest, unless
  the package is built with a seed).
- The container has 768 MB by default, and a container over its memory is killed without a
  ``results.json``: :func:`memory_notes` says when the assignment's per-process limit needs more
  (Autograder Settings raise it), and ``gradescope-run`` says so in the instructor's log.
- Students may see the total only once hidden scenarios may be seen (see
  :mod:`grader.report.gradescope`).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import grader.atomic as atomic
from grader.discovery import find_submission
from grader.errors import GraderError, UsageError
from grader.loading import load_assignment
from grader.report import gradescope
from grader.runner import grade_submission
from grader.spec import HIDDEN_SPEC_FILE, SPEC_FILE, Assignment
from grader.visibility import hidden_visibility_problem
from grader.wheel import build_wheel

ROOT_VARIABLE = "GRADER_AUTOGRADER_ROOT"
GRADESCOPE_DEFAULT_MEMORY_MB = 768   # Gradescope's documented default container memory
# What the grader and the sandbox's interpreter hold besides the scenario process that may grow to
# the assignment's limit (measured: see benchmarks/README.md, "Memory in a Gradescope container").
GRADER_OVERHEAD_MB = 128

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image; what it prints is in the build log.
# Pick a base image with Python >= 3.11 (Ubuntu 24.04). Only the grader's wheel is local; numpy,
# click and pyyaml come from the package registry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "autodiff-grader needs Python >= 3.11; choose a newer Gradescope base image" >&2
    exit 1
fi
if ! "$python" -m pip --version >/dev/null 2>&1; then
    # A fresh image has no package lists: without the update, install finds nothing to install.
    apt-get update
    apt-get install -y --no-install-recommends python3-pip
fi
# PEP 668: a distribution's own Python (Ubuntu 23.04 and later) refuses pip installs unless told;
# this image exists only to run the grader, so we tell it, and only then (an older pip, which does
# not enforce PEP 668, does not know the option either).
flags=()
if "$python" -c 'import os, sys, sysconfig
sys.exit(sys.prefix != sys.base_prefix
         or not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
    flags+=(--break-system-packages)
fi
# With the notebook extra (nbformat), so that students may upload autodiff.ipynb as well.
wheel="$(ls "$here"/wheels/*.whl)[notebook]"
"$python" -m pip install --disable-pip-version-check ${flags[@]+"${flags[@]}"} "$wheel"
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: it writes $root/results/results.json.
root="${GRADER_AUTOGRADER_ROOT:-/autograder}"
exec "${PYTHON:-python3}" -m grader gradescope-run --root "$root" %(options)s
"""


def assignment_seed(assignment: Assignment) -> int:
    """The seed of every run of this assignment on Gradescope: the same for the same assignment
    files (so a regrade reproduces every input), another for any change to them."""
    return int(assignment.digest[:16], 16) % 2**31


def memory_notes(assignment: Assignment, container_mb: int = GRADESCOPE_DEFAULT_MEMORY_MB) -> list[str]:
    """What an instructor must do for the assignment's memory limit to fit the container ([] when it does)."""
    needed = assignment.limits.memory_mb + GRADER_OVERHEAD_MB
    if needed <= container_mb:
        return []
    return [(f"The scenarios may use up to {assignment.limits.memory_mb} MB each (memory_limit_mb), and the grader "
             f"about {GRADER_OVERHEAD_MB} MB more: {needed} MB, above the container's {container_mb} MB. Raise the "
             f"container's memory to at least {needed} MB in the assignment's Autograder Settings on Gradescope, "
             f"or set memory_limit_mb to at most {container_mb - GRADER_OVERHEAD_MB} in assignment.yaml; a "
             "container over its memory is killed, and the student gets no results at all.")]


def build_package(assignment: Assignment, out: Path,
                  hidden_visibility: str = gradescope.DEFAULT_HIDDEN_VISIBILITY, seed: int | None = None) -> Path:
    """Write the Gradescope autograder zip for ``assignment`` (loaded with its hidden scenarios).
    ``seed``: the seed of every run; by default :func:`assignment_seed`, decided at each run."""
    if assignment.hidden_directory is None:
        raise UsageError("the package needs the hidden scenarios: load the assignment with its solutions folder")
    _check_visibility(assignment, hidden_visibility)
    options = f"--hidden-visibility {hidden_visibility}" + ("" if seed is None else f" --seed {int(seed)}")
    wheel_name, wheel_bytes = build_wheel()
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", SETUP_SH, executable=True)
        _add(bundle, "run_autograder", RUN_AUTOGRADER % {"options": options}, executable=True)
        _add(bundle, f"wheels/{wheel_name}", wheel_bytes)
        for folder, names in ((assignment.directory, (SPEC_FILE, _scenario_file(assignment, "public"))),
                              (assignment.hidden_directory, (HIDDEN_SPEC_FILE, _scenario_file(assignment, "hidden")))):
            target = "assignment" if folder == assignment.directory else "solutions"
            for name in names:
                if name:
                    _add(bundle, f"{target}/{name}", (folder / name).read_bytes())
    os.replace(temporary, out)
    return out


def _scenario_file(assignment: Assignment, visibility: str) -> str | None:
    return next((Path(s.file).name for s in assignment.scenarios if s.visibility == visibility), None)


def _add(bundle: zipfile.ZipFile, name: str, data: str | bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o755 if executable else 0o644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


def run_in_gradescope(root: Path, hidden_visibility: str = gradescope.DEFAULT_HIDDEN_VISIBILITY, *,
                      seed: int | None = None, log: Callable[[str], None] = lambda line: None,
                      cgroup: Path = Path("/sys/fs/cgroup")) -> dict:
    """Grade the submission in ``root/submission`` and write ``root/results/results.json``.

    ``seed`` defaults to :func:`assignment_seed`. ``log`` receives lines for the instructor's log
    (Gradescope keeps stdout from students): the seed, a container too small for the limits (read
    from the cgroup file system under ``cgroup``), and why a submission could not be graded.

    Whatever goes wrong (the assignment does not load, an extra is missing, a bug of ours), a
    ``results.json`` is written, score 0 and saying why: without one, Gradescope shows the student
    only that the autograder failed, and the instructor nothing."""
    try:
        document = _graded(root, hidden_visibility, seed, log, cgroup)
    except Exception as error:  # every failure: the student still gets a results.json that says why
        document = _not_graded(error, log)
    atomic.write_text(root / "results" / "results.json", json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return document


def _graded(root: Path, hidden_visibility: str, seed: int | None, log: Callable[[str], None], cgroup: Path) -> dict:
    source = root / "source"
    assignment = load_assignment(source / "assignment", hidden=source / "solutions")
    _check_visibility(assignment, hidden_visibility)
    seed = assignment_seed(assignment) if seed is None else seed
    origin = "derived from the assignment digest" if seed == assignment_seed(assignment) else "configured"
    log(f"Seed {seed} ({origin})")
    container = container_memory_mb(cgroup)
    if container is not None:
        for note in memory_notes(assignment, container):
            log(f"Warning: {note}")
    submission, rivals = find_submission(root / "submission", assignment.submission)
    if submission is None:
        return {"score": 0.0, "output": _not_found(root / "submission", assignment.submission, rivals),
                "visibility": "visible", "stdout_visibility": "hidden", "tests": []}
    result = grade_submission(submission, assignment, seed=seed, scope="all")
    return gradescope.to_results_json(result, hidden_visibility=hidden_visibility)


def _not_graded(error: Exception, log: Callable[[str], None]) -> dict:
    """The results.json of a run that could not grade: for the student, what happened; for the
    instructor's log, the error (and, for a bug of ours, its traceback: Gradescope has no --debug)."""
    if isinstance(error, GraderError):
        for line in str(error).splitlines():
            log(f"Error: {line}")
        output = (f"The autograder could not grade this submission: {error}\n\nThis is a problem of the "
                  "autograder's setup, not of your work: tell your instructors.")
    else:
        import traceback
        log(f"Error: internal error in the grader: {type(error).__name__}: {error}")
        for line in traceback.format_exception(error):
            log(line.rstrip("\n"))
        output = ("The autograder could not grade this submission: it failed with an internal error (not a "
                  "problem of your work). Your instructors can see why in the autograder's log; tell them.")
    return {"score": 0.0, "output": output, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": []}


def container_memory_mb(cgroup: Path = Path("/sys/fs/cgroup")) -> int | None:
    """This container's memory limit in MB (cgroup v2, else v1), or None when unlimited or unknown."""
    for name in ("memory.max", "memory/memory.limit_in_bytes"):
        try:
            text = (cgroup / name).read_text().strip()
        except OSError:
            continue
        if text.isdigit() and int(text) < 2**60:  # v1 says "no limit" with a huge number, v2 with "max"
            return int(text) // 2**20
        return None
    return None


def _check_visibility(assignment: Assignment, hidden_visibility: str) -> None:
    problem = hidden_visibility_problem(
        hidden_visibility, sum(s.points for s in assignment.scenarios if s.visibility == "hidden"))
    if problem:
        raise UsageError(problem)


def _not_found(folder: Path, name: str, rivals: list[str]) -> str:
    """What the student reads when no single file could be graded."""
    if rivals:
        return (f"More than one file in your submission could be {name} ({', '.join(rivals)}). "
                f"Submit only one, named {name}.")
    uploaded = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []
    listed = f" (you submitted: {', '.join(uploaded[:10])}{' ...' if len(uploaded) > 10 else ''})" if uploaded else ""
    return f"No {name} was found in your submission{listed}. Upload a file named {name}."


def default_root() -> Path:
    return Path(os.environ.get(ROOT_VARIABLE, "/autograder"))

