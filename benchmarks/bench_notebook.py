"""What does a notebook cost a student: ``grader check`` on a notebook against the same code as a
``.py``, and ``grader check --watch``'s time from a save to the result on screen.

Measures, in one run on this machine, interleaved so that all see the same machine state:

1. ``python -c "import numpy"`` (the floor of any numpy grader);
2. ``grader check`` on the reference solution as ``autodiff.py`` and as ``autodiff.ipynb`` (the
   handout's notebook layout, made by solutions/make_notebook.py), wall time;
3. ``grader check --watch`` on each: the file is rewritten (an editor's save: a new file renamed
   over the old, the content alternating between two equivalent versions) and the time until the
   run's last line ("Watching ...") is read from the grader's stdout; (1) is timed again between
   saves, and the ratio is against those.

Targets (issue 18): (2) notebook / .py <= 1.15; (3) save-to-result <= 0.5 x (1).
Usage: ``python benchmarks/bench_notebook.py [--runs 21] [--saves 30]``; prints a table and writes
``benchmarks/results/notebook.json``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
SOLUTION = ROOT / "solutions" / "autodiff" / "autodiff.py"
DONE = b"Watching "   # the last line of every --watch run


def grader_command() -> list[str]:
    script = Path(sys.executable).with_name("grader")
    return [str(script)] if script.exists() else [sys.executable, "-m", "grader"]


def solved_notebook() -> str:
    spec = importlib.util.spec_from_file_location("make_notebook", ROOT / "solutions" / "make_notebook.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_notebook(SOLUTION.read_text(), (EXERCISE / "README.md").read_text(), SOLUTION.read_text())


def wall(command: list[str], cwd: Path | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def save(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def watch_times(path: Path, versions: tuple[str, str], saves: int, numpy_times: list[float]) -> list[float]:
    """Seconds from each save of ``path`` to the end of the run it caused, read from the pipe; between
    two saves, ``python -c "import numpy"`` is timed into ``numpy_times`` (the same machine state)."""
    process = subprocess.Popen([*grader_command(), "check", "--watch", str(path), "--assignment", str(EXERCISE)],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    times: list[float] = []
    try:
        _read_until_done(process, selector)  # the first run, cold
        for index in range(saves + 1):
            time.sleep(0.1)  # a student's pause between saves: the watcher is idle, polling
            numpy_times.append(wall([sys.executable, "-c", "import numpy"]))
            time.sleep(0.1)
            start = time.perf_counter()
            save(path, versions[index % 2])
            _read_until_done(process, selector)
            if index:  # the first re-check warms the grader's code paths: not counted
                times.append(time.perf_counter() - start)
    finally:
        process.terminate()
        process.wait()
    return times


def _read_until_done(process: subprocess.Popen, selector: selectors.BaseSelector, timeout: float = 30) -> None:
    seen = b""
    deadline = time.monotonic() + timeout
    while DONE not in seen or not seen.endswith(b"\n"):
        if not selector.select(deadline - time.monotonic()):
            raise RuntimeError(f"no result within {timeout} s: {seen[-500:]!r}")
        chunk = os.read(process.stdout.fileno(), 65536)
        if not chunk:
            raise RuntimeError(f"the watcher ended: {seen[-500:]!r}")
        seen += chunk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--saves", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        py, nb = folder / "autodiff.py", folder / "autodiff.ipynb"
        shutil.copy(SOLUTION, py)
        notebook = solved_notebook()
        nb.write_text(notebook)
        check = [*grader_command(), "check", "--assignment", str(EXERCISE)]
        numpy_times, py_times, nb_times = [], [], []
        for _ in range(args.runs):
            numpy_times.append(wall([sys.executable, "-c", "import numpy"]))
            py_times.append(wall([*check, str(py)]))
            nb_times.append(wall([*check, str(nb)]))
        source = SOLUTION.read_text()
        watch_numpy: list[float] = []
        py_watch = watch_times(py, (source + "\n# saved again\n", source), args.saves, watch_numpy)
        edited = notebook.replace('"id": "try-it-text"', '"id": "try-it-text2"')
        nb_watch = watch_times(nb, (edited, notebook), args.saves, watch_numpy)
    numpy_s = statistics.median(numpy_times)
    watch_numpy_s = statistics.median(watch_numpy)
    figures = {
        "import_numpy_s": numpy_s,
        "check_py_s": statistics.median(py_times),
        "check_notebook_s": statistics.median(nb_times),
        "notebook_over_py": statistics.median(nb_times) / statistics.median(py_times),
        "watch_py_s": statistics.median(py_watch),
        "watch_notebook_s": statistics.median(nb_watch),
        "import_numpy_between_saves_s": watch_numpy_s,
        "watch_py_over_numpy": statistics.median(py_watch) / watch_numpy_s,
        "watch_notebook_over_numpy": statistics.median(nb_watch) / watch_numpy_s,
        "runs": args.runs, "saves": args.saves, "python": sys.version.split()[0],
    }
    print(f"python -c 'import numpy'       {numpy_s * 1000:7.1f} ms (median of {args.runs})")
    print(f"grader check autodiff.py       {figures['check_py_s'] * 1000:7.1f} ms")
    print(f"grader check autodiff.ipynb    {figures['check_notebook_s'] * 1000:7.1f} ms  = "
          f"{figures['notebook_over_py']:.2f} x the .py (target <= 1.15)")
    print(f"import numpy, between saves    {watch_numpy_s * 1000:7.1f} ms")
    print(f"--watch, save to result, .py   {figures['watch_py_s'] * 1000:7.1f} ms  = "
          f"{figures['watch_py_over_numpy']:.2f} x numpy (target <= 0.5; median of {args.saves})")
    print(f"--watch, save to result, .ipynb{figures['watch_notebook_s'] * 1000:7.1f} ms  = "
          f"{figures['watch_notebook_over_numpy']:.2f} x numpy")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "notebook.json").write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
