"""Do two graders write the same output folders? Grade one small class with the same seed using the
grader of a source tree, write everything a class can get, and compare two such runs file by file.

Not a benchmark: the check that a refactoring changed no output (issue 32). Run it once with the
grader of the commit before the change and once with the one after, then compare::

    git archive f9f19af | tar -x -C /tmp/before
    python benchmarks/same_outputs.py write /tmp/before /tmp/outputs-before
    python benchmarks/same_outputs.py write . /tmp/outputs-after /tmp/outputs-before
    python benchmarks/same_outputs.py compare /tmp/outputs-before /tmp/outputs-after

``write SOURCE FOLDER [EARLIER]`` runs SOURCE's grader (``python -m grader`` with SOURCE first on the
path; the exercise and fixtures of the tree this script is in), in one fixed folder under the
temporary folder (so every path a file names is the same in both runs), and keeps in FOLDER:

* ``grade/``: ``grader grade`` of the class with ``--format gradescope canvas lti``, a Canvas roster
  and ``--junit``; then ``grader report --with-students --format moodle-worksheet moodle`` with a
  Moodle grading worksheet as the roster;
* ``regrade/``: a copy of EARLIER's ``grade/`` (default: this run's) graded again, every result
  reused: the outputs made again from the very same stored results, comparable byte for byte;
* ``shard-1/``, ``shard-2/``, ``merged/``: the class in two shards and ``grader merge`` of them.

``compare A B`` compares every file of the two folders byte for byte, except what differs between
two runs by design, which is compared with it masked out:

* in ``results/*.json``, ``gradescope/*.json`` and the JUnit file of a fresh grading: the wall-clock
  timings (``timings``, each scenario's ``duration``, ``execution_time``, JUnit ``time=``);
* ``report.html``: its "Made <date> UTC" line, and the runtime section and table (durations);
  ``report/runtime.csv``: the durations;
* ``lti-scores.jsonl``: each score's ``timestamp`` (the result file's modification time);
* ``batch.json``/``manifest.json``/``summary.json``: compared whole (they hold no time).

A file only the second folder has is a difference, except those in :data:`ADDED` (files a change
added on purpose, with the issue that added them).
"""

from __future__ import annotations

import filecmp
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORK = Path(tempfile.gettempdir()) / "grader-same-outputs"
ROOT = Path(__file__).resolve().parent.parent
ADDED = {"rendering.json": "issue 32: the options the result files were rendered with"}
SEED = "19"
CANVAS_ROSTER = """Student,ID,SIS User ID,SIS Login ID,Section,Autodiff (55)
    Points Possible,,,,,100
"Smith, Jane",4242,S1,jsmith,Sec A,
"Lee, Ann",777,S2,alee,Sec A,
"Ref, Erence",9001,S3,ref0,Sec B,
"""
MOODLE_WORKSHEET = ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                    "Last modified (grade)\n"
                    "Participant 123457,Jane Doe,jane@example.edu,Submitted for grading,,100.00,Yes,-\n"
                    "Participant 99,Nobody Here,nobody@example.edu,No submission,,100.00,Yes,-\n")


def make_class(folder: Path) -> None:
    """The class: the reference, the handout, six buggy fixtures, LMS-named copies, and files that
    cannot be graded (a syntax error, an empty folder, two submissions of one student, a forbidden
    import, a file that is not code)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from buggy_fixtures import BUGGY

    reference, stub = ROOT / "solutions/autodiff/autodiff.py", ROOT / "exercises/autodiff/autodiff.py"
    folder.mkdir(parents=True)
    buggy = sorted(BUGGY.glob("*.py"))[:6]
    for name, source in [("ref", reference), ("handout", stub), *((p.stem, p) for p in buggy)]:
        shutil.copy(source, folder / f"{name}.py")
    shutil.copy(reference, folder / "smithjane_4242_987654_autodiff.py")
    shutil.copy(buggy[0], folder / "leeann_late_777_123_autodiff-1.py")
    shutil.copy(buggy[1], folder / "Jane Doe_123457_assignsubmission_file_autodiff.py")
    (folder / "broken.py").write_text("def detach(self)\n    return self\n")
    (folder / "empty").mkdir()
    shutil.copy(stub, folder / "twice.py")
    (folder / "twice").mkdir()
    shutil.copy(stub, folder / "twice" / "autodiff.py")
    (folder / "notes.txt").write_text("not code")
    (folder / "cheat.py").write_text("import torch\n" + stub.read_text())


def write(source: Path, target: Path, earlier: Path | None = None) -> None:
    source = source.resolve()
    if target.exists():
        raise SystemExit(f"{target} exists: give a new folder")
    target.mkdir(parents=True)
    shutil.rmtree(WORK, ignore_errors=True)
    work = WORK
    work.mkdir()
    students = work / "class"
    make_class(students)
    (work / "canvas.csv").write_text(CANVAS_ROSTER)
    (work / "worksheet.csv").write_text(MOODLE_WORKSHEET)
    environment = {**os.environ, "PYTHONPATH": str(source), "GRADER_CACHE_DIR": str(work / "cache")}
    assignment = ["--assignment", str(ROOT / "exercises/autodiff"), "--solutions", str(ROOT / "solutions/autodiff")]

    def grader(*arguments: str, ok: tuple[int, ...] = (0, 1)) -> None:
        done = subprocess.run([sys.executable, "-m", "grader", *arguments], env=environment, cwd=work,
                              capture_output=True, text=True)
        name = "-".join(a for a in arguments[:1])
        with open(target / f"{name}.log", "a") as log:
            log.write(done.stdout)
        if done.returncode not in ok:
            raise SystemExit(f"grader {' '.join(arguments)}: exit {done.returncode}\n{done.stdout}{done.stderr}")

    out = work / "grade"
    grader("grade", str(students), *assignment, "--out", str(out), "--seed", SEED, "-j", "2",
           "--format", "gradescope", "canvas", "lti", "--roster", str(work / "canvas.csv"),
           "--canvas-column", "Autodiff (55)", "--junit", str(out / "junit.xml"))
    grader("report", str(out), "--with-students", "--format", "moodle-worksheet", "moodle", "--roster",
           str(work / "worksheet.csv"))
    shutil.copytree(out if earlier is None else earlier / "grade", work / "regrade")  # copy2: mtimes kept
    grader("grade", str(students), *assignment, "--out", str(work / "regrade"), "--seed", SEED, "-j", "2",
           "--format", "gradescope", "canvas", "lti", "--roster", str(work / "canvas.csv"),
           "--canvas-column", "Autodiff (55)", "--junit", str(work / "regrade" / "junit.xml"))
    for index in (1, 2):
        grader("grade", str(students), *assignment, "--out", str(work / f"shard-{index}"), "--seed", SEED,
               "-j", "2", "--shard", f"{index}/2", "--format", "gradescope")
    grader("merge", str(work / "shard-1"), str(work / "shard-2"), "--out", str(work / "merged"))
    for name in ("grade", "regrade", "shard-1", "shard-2", "merged"):
        shutil.copytree(work / name, target / name, ignore=shutil.ignore_patterns(".work"))
    shutil.rmtree(work)


# ----------------------------------------------------------------------------- comparing

_JUNIT_TIME = re.compile(r' time="[0-9.]+"')
_MADE = re.compile(r"Made \d{4}-\d\d-\d\d \d\d:\d\d UTC")
_RUNTIME_SECTION = re.compile(r'<section id="runtime".*?</section>', re.DOTALL)
_LTI_TIMESTAMP = re.compile(r'"timestamp": "[^"]+"')


def _masked(relative: str, text: str, fresh: bool) -> str:
    name = relative.rsplit("/", 1)[-1]
    if fresh and (relative.split("/")[1:2] in (["results"], ["gradescope"]) or name == "junit.xml"):
        if name.endswith(".json"):
            document = json.loads(text)
            document.pop("timings", None)
            document.pop("execution_time", None)
            for scenario in document.get("scenarios", ()):
                scenario.pop("duration", None)
            text = json.dumps(document, indent=2, sort_keys=True)
        text = _JUNIT_TIME.sub(' time="-"', text)
    if name == "report.html":
        text = _RUNTIME_SECTION.sub("<runtime>", _MADE.sub("Made <when> UTC", text))
    if name == "runtime.csv":
        text = "\n".join(line.split(",", 2)[0] + ",-" for line in text.splitlines())
    if name == "lti-scores.jsonl":
        text = _LTI_TIMESTAMP.sub('"timestamp": "-"', text)
    return text


def compare(first: Path, second: Path) -> int:
    files = sorted({str(p.relative_to(folder)) for folder in (first, second) for p in folder.rglob("*")
                    if p.is_file()})
    same = exact = 0
    different, added = [], []
    for relative in files:
        a, b = first / relative, second / relative
        if not a.is_file() and b.is_file() and b.name in ADDED:
            added.append(f"{relative} ({ADDED[b.name]})")
            continue
        if not a.is_file() or not b.is_file():
            different.append(f"{relative}: only in {first if a.is_file() else second}")
            continue
        if filecmp.cmp(a, b, shallow=False):
            same += 1
            exact += 1
            continue
        fresh = not relative.startswith("regrade/")   # regrade/: the same stored results in both
        if _masked(relative, a.read_text(encoding="utf-8"), fresh) == _masked(relative, b.read_text(encoding="utf-8"),
                                                                           fresh):
            same += 1
        else:
            different.append(relative)
    print(f"{len(files)} files: {same} the same ({exact} byte for byte, {same - exact} once the documented "
          f"differences are masked), {len(added)} added on purpose, {len(different)} different")
    for line in added:
        print(f"  added {line}")
    for line in different:
        print(f"  DIFFERENT {line}")
    return 1 if different else 0


def main() -> int:
    if len(sys.argv) in (4, 5) and sys.argv[1] == "write":
        write(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]) if len(sys.argv) == 5 else None)
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "compare":
        return compare(Path(sys.argv[2]), Path(sys.argv[3]))
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
