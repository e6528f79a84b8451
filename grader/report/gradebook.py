"""The batch outputs over many submissions: ``gradebook.csv``, ``summary.json`` and the printed summary.

Pure functions over *entries*: a list of ``(student_id, result, error_message)`` where ``result`` is
a :class:`~grader.results.SubmissionResult`, or ``None`` when the batch could not produce one (then
``error_message`` says why: a duplicate student id, a file too large, ...).
"""

from __future__ import annotations

import csv
import math
import statistics
from typing import IO, Iterable

from grader.report.text import points
from grader.results import Status, SubmissionResult

Entry = tuple[str, "SubmissionResult | None", "str | None"]
BINS = 10
BAR_WIDTH = 30
# A spreadsheet runs a cell starting with one of these as a formula (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def gradebook_rows(entries: Iterable[Entry]) -> tuple[list[str], list[list[str]]]:
    """The gradebook as ``(header, rows)``, one row per entry, sorted by student id.

    CSV columns (``OUT/gradebook.csv``):

    - ``student_id``: as derived from the submission's name; a value starting with ``=``, ``+``,
      ``-``, ``@``, a tab or a carriage return gets a leading ``'`` so spreadsheets do not run it
      as a formula.
    - ``score``: points earned (``0`` when the submission could not be graded, e.g. it failed
      to import); empty when no result exists for it at all.
    - ``max_score``: the points available.
    - ``status``: ``graded``, or ``error: <why it could not be graded>``.
    - then one column per scenario id, in the assignment's order: the points earned on that
      scenario; empty when the scenario did not run.
    """
    entries = sorted(entries, key=lambda entry: entry[0])
    scenario_ids = _scenario_order(entries)
    max_score = next((r.max_score for _, r, _ in entries if r is not None), None)
    header = ["student_id", "score", "max_score", "status", *scenario_ids]
    rows = []
    for student, result, message in entries:
        if result is None:
            rows.append([_guard(student), "", _number(max_score), _guard(f"error: {message or 'not graded'}"),
                         *[""] * len(scenario_ids)])
            continue
        earned = {s.id: _number(s.points) for s in result.scenarios if s.status is not Status.NOT_RUN}
        status = "graded" if result.error is None else f"error: {result.error.splitlines()[0]}"
        rows.append([_guard(student), _number(result.score), _number(result.max_score), _guard(status),
                     *[earned.get(i, "") for i in scenario_ids]])
    return header, rows


def write_csv(entries: Iterable[Entry], stream: IO[str]) -> None:
    """Write :func:`gradebook_rows` as CSV to ``stream`` (open files with ``newline=""``)."""
    header, rows = gradebook_rows(entries)
    writer = csv.writer(stream)
    writer.writerow(header)
    writer.writerows(rows)


def summarize(entries: Iterable[Entry]) -> dict:
    """The class summary (``OUT/summary.json``): plain data, JSON-ready.

    Keys: ``count``; ``graded`` (how many have a result without error); ``ungradable`` (list of
    ``{student_id, reason}``); ``max_score``; ``mean``, ``median``, ``min``, ``max`` over the graded
    scores (``None`` when nothing was graded); ``histogram``: ``BINS`` bins over ``0..max_score``
    as ``{from, to, count}`` (the last bin includes ``max_score``); ``scenarios``: per scenario
    ``{id, title, task, passed, total, rate}`` over the graded submissions, lowest rate first
    (what the class got wrong), ties in assignment order.
    """
    entries = sorted(entries, key=lambda entry: entry[0])
    graded = [r for _, r, _ in entries if r is not None and r.error is None]
    ungradable = [{"student_id": student, "reason": result.error if result is not None else message or "not graded"}
                  for student, result, message in entries if result is None or result.error is not None]
    scores = [r.score for r in graded]
    max_score = next((r.max_score for _, r, _ in entries if r is not None), None)
    return {
        "count": len(entries),
        "graded": len(graded),
        "ungradable": ungradable,
        "max_score": max_score,
        "mean": _round(statistics.fmean(scores)) if scores else None,
        "median": _round(statistics.median(scores)) if scores else None,
        "min": min(scores) if scores else None,
        "max": max(scores) if scores else None,
        "histogram": _histogram(scores, max_score or 0.0),
        "scenarios": _pass_rates(entries, graded),
    }


def render_summary(summary: dict) -> str:
    """The summary as text for the terminal: counts, statistics, a histogram bar per bin, pass rates."""
    out = [f"{summary['graded']} of {summary['count']} submissions graded"
           + (f", {len(summary['ungradable'])} could not be graded" if summary["ungradable"] else "")]
    if summary["graded"]:
        out.append(f"Score: mean {points(summary['mean'])}, median {points(summary['median'])}, "
                   f"min {points(summary['min'])}, max {points(summary['max'])} "
                   f"(out of {points(summary['max_score'])})")
        out += ["", "Scores:"]
        peak = max(b["count"] for b in summary["histogram"])
        for b in summary["histogram"]:
            bar = "#" * math.ceil(BAR_WIDTH * b["count"] / peak) if b["count"] else ""
            out.append(f"  {points(b['from']):>6} - {points(b['to']):<6} {bar:<{BAR_WIDTH}} {b['count']}")
    if summary["scenarios"]:
        out += ["", "Scenario pass rates (lowest first):"]
        for s in summary["scenarios"]:
            rate = "   -" if s["rate"] is None else f"{s['rate']:4.0%}"
            out.append(f"  {rate} {s['passed']:>4}/{s['total']:<4} {s['id']}: {s['title']}")
    if summary["ungradable"]:
        out += ["", "Could not be graded:"]
        out += [f"  {u['student_id']}: {u['reason']}" for u in summary["ungradable"]]
    return "\n".join(out) + "\n"


def _scenario_order(entries: list[Entry]) -> list[str]:
    """Scenario ids in assignment order: the first full result's, then any others' new ids."""
    results = [r for _, r, _ in entries if r is not None]
    results.sort(key=lambda r: r.error is not None)  # stable: the first error-free result leads
    order: dict[str, None] = {}
    for result in results:
        order.update(dict.fromkeys(s.id for s in result.scenarios))
    return list(order)


def _pass_rates(entries: list[Entry], graded: list[SubmissionResult]) -> list[dict]:
    rates: dict[str, dict] = {}
    for scenario_id in _scenario_order(entries):
        rates[scenario_id] = {"id": scenario_id, "title": "", "task": "", "passed": 0, "total": 0, "rate": None}
    for result in [r for _, r, _ in entries if r is not None]:
        for s in result.scenarios:
            rates[s.id]["title"] = rates[s.id]["title"] or s.title
            rates[s.id]["task"] = rates[s.id]["task"] or s.task
    for result in graded:
        for s in result.scenarios:
            rates[s.id]["total"] += 1
            rates[s.id]["passed"] += s.passed
    for rate in rates.values():
        rate["rate"] = _round(rate["passed"] / rate["total"]) if rate["total"] else None
    # Scenarios nobody could be graded on carry no information: they go last.
    return sorted(rates.values(), key=lambda r: (r["rate"] is None, r["rate"] or 0.0))


def _histogram(scores: list[float], max_score: float) -> list[dict]:
    width = max_score / BINS
    bins = [{"from": _round(i * width), "to": _round((i + 1) * width), "count": 0} for i in range(BINS)]
    for score in scores:
        # The epsilon keeps 0.3/0.1 == 3 from landing in bin 2; the last bin holds full marks.
        index = math.floor(score / width + 1e-9) if width > 0 else BINS - 1
        bins[min(max(index, 0), BINS - 1)]["count"] += 1
    return bins


def _guard(text: str) -> str:
    return "'" + text if text.startswith(_FORMULA_START) else text


def _number(value: float | None) -> str:
    return "" if value is None else points(value)


def _round(value: float) -> float:
    return round(value, 6)
