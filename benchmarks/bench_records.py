"""Does ``grader/records.py`` still pay for itself? ``@record`` against the plain frozen dataclasses
it stands for, on this machine's Python.

Makes two copies of this source tree in a temporary folder: ``records`` as it is, and ``dataclasses``,
whose ``record`` is ``dataclasses.dataclass(frozen=True, slots=...)`` (what each record declares;
nothing else differs). Then, for ``--runs`` rounds, each a fresh process, the two alternating (and
which goes first alternating too), with ``python -c "import numpy"`` in every round for scale:

1. the in-process import time of the grader's modules on ``grader check``'s path: ``python -X
   importtime -m grader check`` of the reference, the "self" time of every ``grader*`` module summed
   (a module's own code, its classes' declarations included; numpy's and click's left out);
2. the wall time of that ``grader check`` (without ``-X importtime``), as a student waits for it.

Both copies run with their bytecode written beforehand and the spec cache warm (a student's
install compiles the modules, and every check after the first reads the cached spec).

Usage: ``python benchmarks/bench_records.py [--runs 21]``; prints medians and writes
``benchmarks/results/records.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLAIN_RECORD = '''

def record(cls=None, /, *, slots=False):  # bench_records.py: the plain frozen dataclass instead
    def wrap(cls):
        return dataclasses.dataclass(cls, frozen=True, slots=slots)
    return wrap if cls is None else wrap(cls)
'''


def make_trees(folder: Path) -> dict[str, Path]:
    trees = {}
    for name in ("records", "dataclasses"):
        tree = folder / name
        shutil.copytree(ROOT / "grader", tree / "grader", ignore=shutil.ignore_patterns("__pycache__"))
        for part in ("exercises", "solutions"):
            shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
        trees[name] = tree
    records = trees["dataclasses"] / "grader" / "records.py"
    records.write_text(records.read_text() + PLAIN_RECORD)   # the later definition of record wins
    return trees


def environment(tree: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree), "GRADER_CACHE_DIR": str(tree / "cache")}


def check_command(tree: Path, importtime: bool = False) -> list[str]:
    return [sys.executable, *(["-X", "importtime"] if importtime else []), "-m", "grader", "check",
            str(tree / "solutions/autodiff/autodiff.py"), "--assignment", str(tree / "exercises/autodiff")]


def grader_import_ms(tree: Path) -> float:
    done = subprocess.run(check_command(tree, importtime=True), env=environment(tree), cwd=tree,
                          capture_output=True, text=True)
    total = 0
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip().startswith("grader"):
            total += int(line.split(":", 1)[1].split("|")[0])
    return total / 1000


def wall_ms(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)}: exit {done.returncode}\n{done.stderr.decode()}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-records-") as scratch:
        trees = make_trees(Path(scratch))
        for tree in trees.values():   # bytecode written, spec cached
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "grader")], check=True)
            wall_ms(check_command(tree), environment(tree), tree)
        imports: dict[str, list[float]] = {name: [] for name in trees}
        walls: dict[str, list[float]] = {name: [] for name in trees}
        numpy: list[float] = []
        for round_ in range(args.runs):
            order = list(trees) if round_ % 2 == 0 else list(reversed(trees))
            numpy.append(wall_ms([sys.executable, "-c", "import numpy"], environment(trees["records"]), ROOT))
            for name in order:
                imports[name].append(grader_import_ms(trees[name]))
                walls[name].append(wall_ms(check_command(trees[name]), environment(trees[name]), trees[name]))
    medians = {name: {"grader_imports_ms": statistics.median(imports[name]),
                      "check_ms": statistics.median(walls[name])} for name in trees}
    figures = {"python": platform.python_version(), "runs": args.runs, "load_average": os.getloadavg(),
               "import_numpy_ms": statistics.median(numpy), "medians": medians,
               "all": {"imports": imports, "checks": walls, "numpy": numpy}}
    print(f"Python {figures['python']}, {args.runs} interleaved rounds, load average "
          f"{', '.join(f'{x:.2f}' for x in figures['load_average'])}; import numpy {figures['import_numpy_ms']:.1f} ms")
    for name, median in medians.items():
        print(f"  {name:12} grader's own imports on check's path {median['grader_imports_ms']:6.1f} ms, "
              f"grader check {median['check_ms']:6.1f} ms")
    saved = {key: medians["dataclasses"][key] - medians["records"][key] for key in medians["records"]}
    print(f"  records save {saved['grader_imports_ms']:.1f} ms of imports, {saved['check_ms']:.1f} ms of a check")
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    (ROOT / "benchmarks" / "results" / "records.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
