"""The output folder of a batch (``OUT``): what lands there, each file written atomically, and how it
is read back on a rerun::

    batch.json                 the batch's seed, assignment and digest (a rerun reuses the seed)
    results/<student>.json     one native result per submission (the ``grader check --json`` schema)
    gradescope/<student>.json  Gradescope's results.json per submission (with --format gradescope)
    gradebook.csv              one row per student, one column per scenario
    summary.json               class statistics
    .work/                     the unpacked zip, when SUBMISSIONS is one

A reader (or a rerun after SIGKILL) sees each file whole or not at all.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from grader import atomic
from grader.errors import UsageError
from grader.report import gradescope as gradescope_report
from grader.report import json_report
from grader.report.gradebook import write_csv
from grader.results import SubmissionResult
from grader.scoring import Column, StudentRow
from grader.spec import Plan
from grader.visibility import ShownTo

STATE_FILE = "batch.json"


class OutputFolder:
    def __init__(self, path: Path):
        self.path = path
        self.results = path / "results"
        self.gradescope = path / "gradescope"
        self.unpacked = path / ".work" / "unpacked"

    def prepare(self) -> None:
        """Make the folder (or reuse it) and drop what a killed run left half-written."""
        blocker = next((p for p in (self.path, *self.path.parents) if p.exists() and not p.is_dir()), None)
        if blocker is not None:
            raise UsageError(f"cannot write the output folder {self.path}: {blocker} is a file; "
                             "choose another --out")
        self.path.mkdir(parents=True, exist_ok=True)
        for folder in (self.results, self.gradescope, self.path):
            atomic.remove_leftovers(folder)

    def seed(self, plan: Plan, requested: int | None, fresh: int) -> int:
        """The batch's seed: as requested, else the one this folder already used for this assignment,
        else ``fresh``; recorded in ``batch.json``."""
        state_file = self.path / STATE_FILE
        if requested is None and state_file.is_file():
            try:
                state = json.loads(state_file.read_text(encoding="utf-8"))
                if isinstance(state.get("seed"), int) and state.get("assignment") == plan.id:
                    return state["seed"]
            except (OSError, ValueError):
                pass
        seed = fresh if requested is None else requested
        atomic.write_text(state_file, json.dumps({"seed": seed, "assignment": plan.id,
                                                  "assignment_digest": plan.digest}, indent=2) + "\n")
        return seed

    def stored(self, student_id: str) -> SubmissionResult | None:
        """The result stored for a student, or None when there is none (or it cannot be read)."""
        found = self.stored_document(student_id)
        return None if found is None else found[0]

    def stored_document(self, student_id: str) -> tuple[SubmissionResult, dict] | None:
        """The result stored for a student and the document it was read from (whose derived
        views, such as ``tests``, were rendered with the options of the run that wrote it)."""
        try:
            document = json.loads(self.result_file(student_id).read_text(encoding="utf-8"))
            result = SubmissionResult.from_dict({k: v for k, v in document.items()
                                                 if k in SubmissionResult.field_names()})
            return result, document
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None

    def result_file(self, student_id: str) -> Path:
        return self.results / f"{student_id}.json"

    def save(self, student_id: str, result: SubmissionResult, hidden_shown_to: ShownTo) -> None:
        atomic.write_text(self.result_file(student_id), json_report.dumps(result, hidden_shown_to))

    def save_gradescope(self, student_id: str, result: SubmissionResult, hidden_shown_to: ShownTo) -> None:
        atomic.write_text(self.gradescope / f"{student_id}.json",
                          gradescope_report.dumps(result, hidden_visibility=hidden_shown_to))

    def drop_gradescope(self) -> None:
        """Remove Gradescope files of an earlier run: this run was not asked for them, and every
        derived file in OUT is rendered from the stored results with this run's options."""
        if self.gradescope.is_dir():
            for stale in self.gradescope.glob("*.json"):
                stale.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.gradescope.rmdir()

    def save_gradebook(self, rows: Iterable[StudentRow], summary: dict, columns: tuple[Column, ...]) -> None:
        with atomic.replacing(self.path / "gradebook.csv") as stream:
            write_csv(rows, stream, columns)
        atomic.write_text(self.path / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")

    def stored_results(self, rows: Iterable[StudentRow]) -> Iterator[tuple[str, SubmissionResult]]:
        """``(student_id, result)`` for every row with a stored result, read one at a time."""
        for row in rows:
            if row.has_result:
                result = self.stored(row.student_id)
                if result is not None:
                    yield row.student_id, result
