"""One class graded locally (``grader grade -j 2``) and on a 2-worker LocalCluster, side by side in one run.

The cluster (two worker processes, one thread and so one sandbox each: as many sandboxes as ``-j 2``;
Dask's defaults otherwise, no setting or resource of the grader's) runs on this machine, its
scheduler in this process; ``grader grade --scheduler`` is its client, a
process of its own. Reported per round: both wall times, the cluster's overhead, the client's CPU
per submission (user + system, from its rusage), and this process's CPU per submission (the
scheduler and the nannies: an upper bound on the scheduler's cost per task). Then a no-op task
stream through the same scheduler (the same resource request, no grading) gives the scheduler's
per-task cost on its own; and from all of these, the paper estimate of a larger class on a larger
cluster (``--estimate-submissions``, ``--estimate-machines``, ``--estimate-cores``).

Target (issues 20 and 33): the cluster's overhead at most 15%. The machine's speed drifts and other work
shares it: every round records the load average before and after, and rounds alternate which runs
first. Usage: ``python benchmarks/bench_cluster.py [--submissions 500] [--rounds 1]``; writes
``benchmarks/results/cluster-<N>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from distributed import Client, LocalCluster

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_batch import make_class  # noqa: E402  (the same class as the batch benchmark)

GRADER = [sys.executable, "-m", "grader"]


def timed(command: list[str]) -> dict:
    """Run ``command``; its wall time and its own CPU (with its children's, locally the sandboxes')."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return {"seconds": seconds, "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "load_before": load, "load_after": os.getloadavg()[0]}


def grade(folder: Path, out: Path, *extra: str) -> list[str]:
    shutil.rmtree(out, ignore_errors=True)
    return [*GRADER, "grade", str(folder), "--assignment", str(ROOT / "exercises" / "autodiff"), "--out", str(out),
            "--seed", "1", *extra]


def noop_tasks(client: Client, count: int) -> dict:
    """``count`` tasks that do nothing, through the scheduler: its CPU per task (this process's, the
    client's share included) and the wall time."""
    cpu, start = time.process_time(), time.perf_counter()
    futures = [client.submit(int, number, key=f"noop-{number}") for number in range(count)]
    client.gather(futures)
    return {"tasks": count, "seconds": time.perf_counter() - start, "cpu": time.process_time() - cpu}


def estimate(per_submission_core: float, scheduler_task: float, client_result: float, args) -> dict:
    """The wall time of ``args.estimate_submissions`` on ``machines x cores``: each part a bound on
    its own (they overlap, being pipelined), the largest sets the pace."""
    n, slots = args.estimate_submissions, args.estimate_machines * args.estimate_cores
    bounds = {"grading (cores)": n * per_submission_core / slots,
              "scheduler (one thread)": n * scheduler_task,
              "client (one thread: decode, check, write)": n * client_result}
    return {"submissions": n, "machines": args.estimate_machines, "cores": args.estimate_cores,
            "bounds_seconds": bounds, "limit": max(bounds, key=lambda k: bounds[k]),
            "seconds": max(bounds.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--noop-tasks", type=int, default=2000)
    parser.add_argument("--estimate-submissions", type=int, default=10_000)
    parser.add_argument("--estimate-machines", type=int, default=20)
    parser.add_argument("--estimate-cores", type=int, default=8)
    args = parser.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        (work / "class").mkdir()
        make_class(work / "class", args.submissions)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None, silence_logs=40) as cluster, \
                Client(cluster.scheduler_address) as client:
            warm = work / "class-warm"
            warm.mkdir()
            for path in sorted((work / "class").glob("*.py"))[:4]:
                shutil.copy(path, warm / path.name)
            # Starts the workers' sandboxes, and measures the client's fixed CPU (its imports, connecting).
            fixed = timed(grade(warm, work / "warm", "--scheduler", cluster.scheduler_address))["cpu"]
            for number in range(args.rounds):
                measured: dict = {}
                order = ("local", "cluster") if number % 2 == 0 else ("cluster", "local")
                for which in order:
                    if which == "local":
                        measured["local"] = timed(grade(work / "class", work / "out-local", "-j", "2"))
                    else:
                        cpu = time.process_time()
                        measured["cluster"] = timed(grade(work / "class", work / "out-cluster",
                                                          "--scheduler", cluster.scheduler_address))
                        measured["cluster"]["scheduler_cpu"] = time.process_time() - cpu
                same = all((work / "out-local" / name).read_bytes() == (work / "out-cluster" / name).read_bytes()
                           for name in ("gradebook.csv", "summary.json"))
                measured.update(order=list(order), identical=same,
                                overhead=measured["cluster"]["seconds"] / measured["local"]["seconds"] - 1)
                rounds.append(measured)
                _report(measured, args.submissions)
            noop = noop_tasks(client, args.noop_tasks)
    n = args.submissions
    overhead = statistics.median(r["overhead"] for r in rounds)
    per_core = statistics.median(2 * r["local"]["seconds"] / n for r in rounds)  # 2 busy cores
    client_result = statistics.median((r["cluster"]["cpu"] - fixed) / n for r in rounds)
    scheduler_task = noop["cpu"] / noop["tasks"]
    paper = estimate(per_core, scheduler_task, client_result, args)
    print(f"no-op tasks: {noop['tasks']} in {noop['seconds']:.2f} s, scheduler+client CPU {1e3 * scheduler_task:.2f} "
          f"ms/task; median overhead {100 * overhead:+.1f}% (target <= 15%)")
    print(f"paper estimate, {paper['submissions']} submissions on {paper['machines']} x {paper['cores']} cores: "
          + ", ".join(f"{k} {v:.0f} s" for k, v in paper["bounds_seconds"].items()) + f": ~{paper['seconds']:.0f} s")
    figures = {"submissions": n, "cpus": os.cpu_count(), "overhead": overhead, "rounds": rounds, "noop": noop,
               "client_fixed_cpu": fixed,
               "per_submission_core_seconds": per_core, "client_cpu_per_result": client_result,
               "scheduler_cpu_per_task": scheduler_task, "estimate": paper}
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / f"cluster-{n}.json").write_text(json.dumps(figures, indent=2) + "\n")


def _report(measured: dict, n: int) -> None:
    local, cluster = measured["local"], measured["cluster"]
    print(f"local -j 2: {local['seconds']:.1f} s ({n / local['seconds']:.2f}/s); 2-worker cluster: "
          f"{cluster['seconds']:.1f} s ({n / cluster['seconds']:.2f}/s); overhead {100 * measured['overhead']:+.1f}%; "
          f"client CPU {1e3 * cluster['cpu'] / n:.1f} ms/submission, scheduler+nannies "
          f"{1e3 * cluster['scheduler_cpu'] / n:.1f} ms; identical outputs: {measured['identical']}; "
          f"load {local['load_before']:.1f}-{cluster['load_after']:.1f}")


if __name__ == "__main__":
    main()
