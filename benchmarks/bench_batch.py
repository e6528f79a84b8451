"""Batch grading throughput and memory, against the naive pytest-per-submission baseline.

Generates a class of N submissions (copies of the reference solution and of the buggy fixtures,
in turn), grades it with ``grader grade -j JOBS`` in a subprocess that reports its own peak RSS,
and times the naive baseline (``python -m pytest benchmarks/baseline`` once per submission, one
after the other) on the first B of them, in the same run.

Targets (issue 4): at least 20x the baseline's submissions per second; the grader's peak memory
flat in the number of submissions (compare ``--submissions 500`` with ``--submissions 5000``).
Usage: ``python benchmarks/bench_batch.py [--submissions 500] [--baseline 26] [--jobs 2] [--rounds 3] [--junit]``;
writes ``benchmarks/results/batch-<N>.json``. The machine's speed drifts, so ``--rounds`` measures
several times, the baseline first in every other round, and reports the median speedup.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PEAK = ("import atexit, resource, sys\n"
        "atexit.register(lambda: sys.stderr.write("
        "f'PEAK_RSS_KB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}\\n'))\n"
        "from grader.cli import main\n"
        "sys.argv[0] = 'grader'\n"
        "main()\n")


def make_class(folder: Path, count: int) -> list[Path]:
    """``count`` submissions: the reference and each buggy fixture in turn."""
    spec = importlib.util.spec_from_file_location("make_buggy", ROOT / "tests" / "fixtures" / "make_buggy.py")
    make_buggy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_buggy)
    buggy = make_buggy.write_buggy(folder.parent / "buggy")
    sources = [ROOT / "solutions" / "autodiff" / "autodiff.py", *sorted(buggy.glob("*.py"))]
    paths = []
    for number in range(count):
        path = folder / f"student{number:05d}.py"
        shutil.copy(sources[number % len(sources)], path)
        paths.append(path)
    return paths


def ours(folder: Path, out: Path, jobs: int, junit: bool = False) -> dict:
    command = [sys.executable, "-c", PEAK, "grade", str(folder), "--assignment", str(ROOT / "exercises" / "autodiff"),
               "--out", str(out), "--seed", "1", "-j", str(jobs),
               *(["--junit", str(out / "junit.xml")] if junit else [])]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    peak = next(int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("PEAK_RSS_KB"))
    graded = len(list((out / "results").glob("*.json")))
    return {"seconds": elapsed, "graded": graded, "per_second": graded / elapsed, "peak_rss_mb": peak / 1024,
            "exit_code": done.returncode}


def baseline(paths: list[Path]) -> dict:
    start = time.perf_counter()
    for path in paths:
        subprocess.run([sys.executable, "-m", "pytest", str(ROOT / "benchmarks" / "baseline"), "-q", "-p",
                        "no:cacheprovider"], env={**os.environ, "SUBMISSION": str(path)}, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    return {"seconds": elapsed, "graded": len(paths), "per_second": len(paths) / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=500)
    parser.add_argument("--baseline", type=int, default=26,
                        help="submissions the baseline grades (0: skip); 26 = one of each source, the same mix")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure this many times, the baseline first in every other round (the machine's "
                             "speed drifts); the speedup reported is the median of the rounds'")
    parser.add_argument("--junit", action="store_true",
                        help="also write JUnit XML (grade --junit), so its memory counts too; "
                             "writes results/batch-<N>-junit.json")
    args = parser.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        (work / "class").mkdir()
        paths = make_class(work / "class", args.submissions)
        for number in range(args.rounds):
            measured = {}
            order = ("ours", "baseline") if number % 2 == 0 else ("baseline", "ours")
            for which in order:
                if which == "ours":
                    shutil.rmtree(work / "out", ignore_errors=True)
                    measured["ours"] = ours(work / "class", work / "out", args.jobs, args.junit)
                elif args.baseline:
                    measured["baseline"] = baseline(paths[: args.baseline])
            if args.baseline:
                measured["speedup"] = measured["ours"]["per_second"] / measured["baseline"]["per_second"]
            measured["order"] = list(order)
            rounds.append(measured)
            _report(measured, args)
    figures = {"submissions": args.submissions, "jobs": args.jobs, "cpus": os.cpu_count(), "junit": args.junit,
               **rounds[0],
               "rounds": rounds}
    if args.baseline:
        figures["speedup"] = statistics.median(r["speedup"] for r in rounds)
        if args.rounds > 1:
            print(f"median speedup over {args.rounds} rounds: {figures['speedup']:.1f}x (target >= 20)")
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    name = f"batch-{args.submissions}{'-junit' if args.junit else ''}.json"
    (out / name).write_text(json.dumps(figures, indent=2) + "\n")


def _report(measured: dict, args) -> None:
    o = measured["ours"]
    print(f"grader grade -j {args.jobs}: {o['graded']} submissions in {o['seconds']:.1f} s = "
          f"{o['per_second']:.1f}/s, peak RSS {o['peak_rss_mb']:.0f} MB")
    if args.baseline:
        b = measured["baseline"]
        print(f"naive pytest baseline: {b['graded']} submissions in {b['seconds']:.1f} s = {b['per_second']:.2f}/s")
        print(f"speedup: {measured['speedup']:.1f}x (target >= 20)")


if __name__ == "__main__":
    main()
