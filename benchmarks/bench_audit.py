"""``grader audit`` on the autodiff assignment: the reference on 20 seeds, the handout, and every named
and automatic mutant, on every scenario (public and hidden), through the real CLI.

Target (issue 16): under 3 minutes on the 2-core CI machine. Usage:
``python benchmarks/bench_audit.py [--rounds 3] [--jobs 2] [--seeds 20]``; writes
``benchmarks/results/audit.json`` (each round's wall time and the audit's own phase timings).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 180.0


def one_round(jobs: int, seeds: int) -> dict:
    with tempfile.TemporaryDirectory() as work:
        report = Path(work) / "audit.json"
        command = [sys.executable, "-m", "grader", "audit", "--assignment", str(ROOT / "exercises" / "autodiff"),
                   "--seeds", str(seeds), "-j", str(jobs), "--json", str(report), "--no-matrix"]
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise SystemExit(f"grader audit failed ({done.returncode}):\n{done.stderr}")
        document = json.loads(report.read_text())
    mutants = document["mutants"]
    return {"seconds": round(elapsed, 2), "audit_timings": document["timings"], "seeds": len(document["seeds"]),
            "scenarios": len(document["scenarios"]), "named": sum(m["kind"] == "named" for m in mutants),
            "automatic": sum(m["kind"] == "automatic" for m in mutants),
            "submissions_graded": len(document["seeds"]) + 1 + sum(m["status"] != "equivalent" for m in mutants),
            "passed": document["passed"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    rounds = []
    for number in range(args.rounds):
        rounds.append(one_round(args.jobs, args.seeds))
        print(f"round {number + 1}: {rounds[-1]['seconds']:.1f} s ({rounds[-1]['submissions_graded']} submissions "
              f"x {rounds[-1]['scenarios']} scenarios)", flush=True)
    median = statistics.median(r["seconds"] for r in rounds)
    summary = {"jobs": args.jobs, "rounds": rounds, "median_seconds": median, "target_seconds": TARGET_SECONDS,
               "met": median < TARGET_SECONDS}
    out = ROOT / "benchmarks" / "results" / "audit.json"
    out.write_text(json.dumps(summary, indent=2) + "\n")
    print(f"median {median:.1f} s (target < {TARGET_SECONDS:.0f} s): {'met' if summary['met'] else 'NOT met'}; "
          f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
