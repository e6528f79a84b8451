"""The Gradescope autograder: the zip an instructor uploads, and the run inside Gradescope.

``build_package`` writes ``autograder.zip``::

    setup.sh          installs the grader from the wheel below (its dependencies from the registry)
    run_autograder    grades /autograder/submission/ into /autograder/results/results.json
    wheels/autodiff_grader-<version>-py3-none-any.whl
    assignment/       assignment.yaml and the public scenario file
    solutions/        hidden.yaml and the hidden scenario file (never the reference solution)

``run_in_gradescope`` is what ``run_autograder`` calls (``grader gradescope-run``). The root folder
is ``/autograder`` unless ``GRADER_AUTOGRADER_ROOT`` says otherwise (tests lay out a temporary one).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

from grader import atomic
from grader.errors import UsageError
from grader.report import gradescope
from grader.loading import load_assignment
from grader.spec import HIDDEN_SPEC_FILE, SPEC_FILE, Assignment
from grader.wheel import build_wheel

ROOT_VARIABLE = "GRADER_AUTOGRADER_ROOT"

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder image. Pick a base image with
# Python >= 3.11 (Ubuntu 24.04). Only the grader's wheel is local; numpy, click and pyyaml come
# from the package registry.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "autodiff-grader needs Python >= 3.11; choose a newer Gradescope base image" >&2
    exit 1
fi
"$python" -m pip --version >/dev/null 2>&1 || apt-get install -y python3-pip
"$python" -m pip install --disable-pip-version-check --break-system-packages "$here"/wheels/*.whl 2>/dev/null \\
    || "$python" -m pip install --disable-pip-version-check "$here"/wheels/*.whl
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission: it writes $root/results/results.json.
root="${GRADER_AUTOGRADER_ROOT:-/autograder}"
exec "${PYTHON:-python3}" -m grader gradescope-run --root "$root" --hidden-visibility %(hidden_visibility)s
"""


def build_package(assignment: Assignment, out: Path, hidden_visibility: str = gradescope.DEFAULT_HIDDEN_VISIBILITY) -> Path:
    """Write the Gradescope autograder zip for ``assignment`` (loaded with its hidden scenarios)."""
    if assignment.hidden_directory is None:
        raise UsageError("the package needs the hidden scenarios: load the assignment with its solutions folder")
    if hidden_visibility not in gradescope.VISIBILITIES:
        raise UsageError(f"hidden visibility must be one of {', '.join(gradescope.VISIBILITIES)}")
    wheel_name, wheel_bytes = build_wheel()
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(f".{out.name}.tmp")
    with zipfile.ZipFile(temporary, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        _add(bundle, "setup.sh", SETUP_SH, executable=True)
        _add(bundle, "run_autograder", RUN_AUTOGRADER % {"hidden_visibility": hidden_visibility}, executable=True)
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


def run_in_gradescope(root: Path, hidden_visibility: str = gradescope.DEFAULT_HIDDEN_VISIBILITY) -> dict:
    """Grade the submission in ``root/submission`` and write ``root/results/results.json``."""
    from grader.runner import grade_submission

    source = root / "source"
    assignment = load_assignment(source / "assignment", hidden=source / "solutions")
    results_file = root / "results" / "results.json"
    submission = _find_submission(root / "submission", assignment.submission)
    if submission is None:
        document = {"score": 0.0, "output": f"No {assignment.submission} was found in your submission. "
                    f"Upload a file named {assignment.submission}.", "visibility": "visible",
                    "stdout_visibility": "hidden", "tests": []}
    else:
        result = grade_submission(submission, assignment, scope="all")
        document = gradescope.to_results_json(result, hidden_visibility=hidden_visibility)
    atomic.write_text(results_file, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return document


def _find_submission(folder: Path, name: str) -> Path | None:
    """The submission file: ``name`` at the top, else the only file of that name below, else the
    only ``.py`` file anywhere (students upload folders and renamed files)."""
    if (folder / name).is_file():
        return folder / name
    for pattern in (name, "*.py"):
        matches = [p for p in folder.rglob(pattern) if p.is_file() and "__MACOSX" not in p.parts]
        if len(matches) == 1:
            return matches[0]
    return None


def default_root() -> Path:
    return Path(os.environ.get(ROOT_VARIABLE, "/autograder"))

