"""The class report of a large class: how long ``grader report`` takes and how big the page is.

Grades the reference, the handout and the buggy fixtures once (a real batch), then makes an
output folder of ``--submissions`` results by copying those results under new student ids (with
the summary and identities of a batch of that size), and times ``grader report OUT`` (the page
and its tables) and ``grader report OUT --with-students`` (also a page per student), each a fresh
process, ``--rounds`` times. Writes ``results/report-<N>.json``.

    python benchmarks/bench_report.py --submissions 5000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import make_buggy

    work = Path(tempfile.mkdtemp(prefix="bench-report-"))
    try:
        sources = work / "sources"
        make_buggy.write_buggy(sources)
        shutil.copy(ROOT / "solutions/autodiff/autodiff.py", sources / "reference.py")
        shutil.copy(ROOT / "exercises/autodiff/autodiff.py", sources / "handout.py")
        seed_out = work / "graded"
        subprocess.run([sys.executable, "-m", "grader", "grade", str(sources), "--assignment",
                        str(ROOT / "exercises/autodiff"), "--out", str(seed_out), "--seed", "1", "-j", "2"],
                       check=False, capture_output=True)
        graded = sorted((seed_out / "results").glob("*.json"))
        out = work / "class"
        (out / "results").mkdir(parents=True)
        identities = {}
        for i in range(args.submissions):
            student = f"student{i:05d}"
            shutil.copy(graded[i % len(graded)], out / "results" / f"{student}.json")
            identities[student] = {"system": "plain", "display_name": student, "lms_id": None, "file_id": None,
                                   "late": False}
        summary = json.loads((seed_out / "summary.json").read_text())
        summary["count"] = summary["graded"] = args.submissions
        (out / "summary.json").write_text(json.dumps(summary))
        (out / "identities.json").write_text(json.dumps(identities))
        figures = {}
        for name, extra in (("report", []), ("report --with-students", ["--with-students"])):
            times = []
            for _ in range(args.rounds):
                start = time.perf_counter()
                subprocess.run([sys.executable, "-m", "grader", "report", str(out), *extra], check=True,
                               capture_output=True)
                times.append(time.perf_counter() - start)
            figures[name] = {"seconds": [round(t, 3) for t in times], "median_s": round(statistics.median(times), 3),
                             "page_bytes": (out / "report.html").stat().st_size,
                             "tables_bytes": sum(p.stat().st_size for p in (out / "report").glob("*.csv"))}
        pages = sorted((out / "students").glob("*.html"))
        result = {"submissions": args.submissions, "runs": figures, "student_pages": len(pages),
                  "student_pages_bytes": sum(p.stat().st_size for p in pages)}
        print(json.dumps(result, indent=2))
        target = ROOT / "benchmarks" / "results" / f"report-{args.submissions}.json"
        target.write_text(json.dumps(result, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
