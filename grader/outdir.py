"""The output folder of a batch (``OUT``): what lands there, each file written atomically, and how it
is read back on a rerun::

    batch.json                 the batch's seed, assignment and digest (a rerun reuses the seed)
    results/<student>.json     one native result per submission (the ``grader check --json`` schema)
    rendering.json             the options the results' derived view (``tests``) was rendered with,
                               when every file of results/ has them (:meth:`OutputFolder.rendered_with`)
    gradescope/<student>.json  Gradescope's results.json per submission (with --format gradescope)
    gradebook.csv              one row per student, one column per scenario
    summary.json               class statistics
    identities.json            each student's LMS identity, as the download's names give it
    report.html, report/*.csv  the class report and its tables (grader report)
    students/<student>.html    what each student reads (grader report --with-students)
    canvas.csv, moodle.csv, lti-scores.jsonl   gradebooks an LMS imports (--format canvas|moodle|lti)
    adjustments.json           the overrides, late penalty and --missing policy the outputs were made with
                               (only when a run was given some; grader report makes its outputs alike)
    manifest.json              what the gradebook was made of: the students, the ignored files, the columns,
                               the shard (``grader merge`` reads it; :mod:`grader.manifest`)
    .work/                     the unpacked zip, when SUBMISSIONS is one

A reader (or a rerun after SIGKILL) sees each file whole or not at all.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

import grader.atomic as atomic
from grader.adjustments import Adjustments
from grader.class_data import ClassBuilder, ClassData, result_of
from grader.errors import UsageError
from grader.lms_names import Identity, NameSystem
from grader.manifest import Manifest
from grader.report.gradebook import write_csv
from grader.results import SubmissionResult
from grader.scoring import Column, StudentRow
from grader.spec import Plan
from grader.summary import ClassSummary
from grader.visibility import ShownTo

STATE_FILE = "batch.json"
IDENTITIES_FILE = "identities.json"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
MANIFEST_FILE = "manifest.json"
RENDERING_FILE = "rendering.json"
ADJUSTMENTS_FILE = "adjustments.json"


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):
            # New, it is private (0700): it will hold every student's results, and grades are personal
            # data. The files in it follow the umask, so `chmod g+rx OUT` (or an OUT made beforehand)
            # shares it; an existing folder keeps its permissions.
            self.path.mkdir(mode=0o700)
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
        self.record_seed(plan.id, plan.digest, seed)
        return seed

    def record_seed(self, assignment: str, digest: str, seed: int) -> None:
        """Write ``batch.json``: the seed a rerun into this folder reuses."""
        atomic.write_text(self.path / STATE_FILE, json.dumps({"seed": seed, "assignment": assignment,
                                                              "assignment_digest": digest}, indent=2) + "\n")

    def stored(self, student_id: str) -> SubmissionResult | None:
        """The result stored for a student, or None when there is none (or it cannot be read)."""
        try:
            document = json.loads(self.result_file(student_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return result_of(document) if isinstance(document, dict) else None

    def result_file(self, student_id: str) -> Path:
        return self.results / f"{student_id}.json"

    def result_text(self, student_id: str) -> str | None:
        """The text of a student's result file, or None when there is none (or it cannot be read)."""
        try:
            return self.result_file(student_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def save_result(self, student_id: str, text: str) -> None:
        atomic.write_text(self.result_file(student_id), text)

    def save_gradescope(self, student_id: str, text: str) -> None:
        atomic.write_text(self.gradescope / f"{student_id}.json", text)

    def rendered_with(self) -> ShownTo | None:
        """How every file of ``results/`` shows hidden scenarios in its ``tests`` view, as recorded
        when they were written; None when that is not known (a batch interrupted while rendering
        them otherwise, a folder written before the record, one that cannot be read)."""
        try:
            document = json.loads((self.path / RENDERING_FILE).read_text(encoding="utf-8"))
            return ShownTo(document["hidden_visibility"])
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def record_rendering(self, hidden_visibility: ShownTo | None) -> None:
        """Record how every file of ``results/`` shows hidden scenarios (None: forget it, before
        any of them is written otherwise)."""
        path = self.path / RENDERING_FILE
        if hidden_visibility is None:
            path.unlink(missing_ok=True)
        else:
            atomic.write_text(path, json.dumps({"hidden_visibility": hidden_visibility.value}) + "\n")

    def record_adjustments(self, adjustments: Adjustments | None) -> None:
        """Record the adjustments this run's outputs are made with (None: none, the file removed)."""
        path = self.path / ADJUSTMENTS_FILE
        if adjustments is None or not adjustments.given:
            path.unlink(missing_ok=True)
        else:
            atomic.write_text(path, json.dumps(adjustments.to_dict(), indent=2, ensure_ascii=False) + "\n")

    def adjustments(self) -> Adjustments | None:
        """The adjustments the last batch's outputs were made with, or None (none, or no record)."""
        path = self.path / ADJUSTMENTS_FILE
        try:
            return Adjustments.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise UsageError(f"{path} cannot be read ({error}); rerun grader grade with the options it was "
                             "given") from None

    def drop_gradescope(self) -> None:
        """Remove Gradescope files of an earlier run: this run was not asked for them, and every
        derived file in OUT is rendered from the stored results with this run's options."""
        if self.gradescope.is_dir():
            for stale in self.gradescope.glob("*.json"):
                stale.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                self.gradescope.rmdir()

    def save_gradebook(self, rows: Iterable[StudentRow], summary: ClassSummary, columns: tuple[Column, ...], *,
                       late_penalty: bool = False, overrides: bool = False) -> None:
        with atomic.replacing(self.path / "gradebook.csv") as stream:
            write_csv(rows, stream, columns, late_penalty=late_penalty, overrides=overrides)
        atomic.write_text(self.path / SUMMARY_FILE, json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n")

    def summary(self) -> dict:
        """The batch's ``summary.json`` (a UsageError when there is none: the batch did not finish)."""
        try:
            return json.loads((self.path / SUMMARY_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"{self.path} has no {SUMMARY_FILE}: it is not the output folder of a finished "
                             "grader grade; run grader grade (again) with --out pointing there") from None
        except (OSError, ValueError) as error:
            raise UsageError(f"{self.path / SUMMARY_FILE} cannot be read ({error}); rerun grader grade") from None

    def save_identities(self, identities: dict[str, Identity]) -> None:
        entries = ((student, {"system": identity.system.value, "display_name": identity.display_name,
                              "lms_id": identity.lms_id, "file_id": identity.file_id, "late": identity.late,
                              **({"late_by": identity.late_by} if identity.late_by else {})})
                   for student, identity in sorted(identities.items()))
        with atomic.replacing(self.path / IDENTITIES_FILE) as stream:
            _dump_mapping(entries, stream)

    def identities(self) -> dict[str, Identity]:
        """Each student's identity as the batch found it (empty when the folder predates the file)."""
        try:
            document = json.loads((self.path / IDENTITIES_FILE).read_text(encoding="utf-8"))
            return {student: Identity(NameSystem(item["system"]), item["display_name"], item.get("lms_id"),
                                      item.get("file_id"), bool(item.get("late")), str(item.get("late_by") or ""))
                    for student, item in document.items()}
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
            raise UsageError(f"{self.path / IDENTITIES_FILE} cannot be read ({error}); rerun grader grade") from None

    def documents(self) -> Iterator[tuple[str, dict, float]]:
        """``(student_id, result document, the file's modification time)`` for every stored result,
        by student id; a file that cannot be read as a JSON object is skipped."""
        if not self.results.is_dir():
            return
        for path in sorted(self.results.glob("*.json")):
            if path.name.startswith("."):
                continue
            try:
                with open(path, "rb") as stream:
                    document = json.load(stream)
                    modified = os.fstat(stream.fileno()).st_mtime
            except (OSError, ValueError):
                continue
            if isinstance(document, dict):
                yield path.name[:-len(".json")], document, modified

    def load_class(self, on_result: Callable[[str, SubmissionResult | None], None] | None = None, *,
                   identities: dict[str, Identity] | None = None, summary: ClassSummary | None = None) -> ClassData:
        """The class of this folder, from its results, its ``summary`` (None: as stored here) and the
        students' ``identities`` (None: as stored here; a caller that names no one passes ``{}``);
        ``on_result(student_id, result)`` is called for each stored result as it is read (None when
        its document holds no result), so that a caller needing each result reads it once."""
        builder = ClassBuilder(self.summary() if summary is None else summary.to_dict(),
                               self.identities() if identities is None else identities)
        # Reading thousands of results makes millions of objects that all stay alive: the cyclic
        # collector's passes over them find nothing and cost a fifth of the time (benchmarks/README.md).
        collecting = gc.isenabled()
        gc.disable()
        try:
            for student_id, document, modified in self.documents():
                result = builder.add(student_id, document, modified)
                if on_result is not None:
                    on_result(student_id, result)
        finally:
            if collecting:
                gc.enable()
        return builder.build()

    def save_report(self, html: str, tables: Iterable[tuple[str, list[str], list[list[str]]]],
                    html_path: Path | None = None) -> Path:
        """Write the class report (``report.html``, or ``html_path``) and its tables as
        ``report/<name>.csv`` (dropping tables an earlier report wrote that this one has not)."""
        target = html_path or self.path / REPORT_FILE
        folder = self.path / "report"
        written = set()
        for name, header, rows in tables:
            with atomic.replacing(folder / f"{name}.csv") as stream:
                writer = csv.writer(stream)
                writer.writerow(header)
                writer.writerows(rows)
            written.add(f"{name}.csv")
        for stale in folder.glob("*.csv"):
            if stale.name not in written:
                stale.unlink(missing_ok=True)
        atomic.write_text(target, html)
        return target

    def student_pages(self) -> StudentPages:
        """A writer of ``students/<student>.html`` (see :class:`StudentPages`)."""
        return StudentPages(self.path / "students")

    def save_text(self, name: str, text: str) -> Path:
        """Write a derived file at the top of the folder (an LMS gradebook)."""
        atomic.write_text(self.path / name, text)
        return self.path / name

    def save_manifest(self, manifest: Manifest) -> None:
        with atomic.replacing(self.path / MANIFEST_FILE) as stream:
            json.dump(manifest.to_dict(), stream, indent=2, ensure_ascii=False)  # piece by piece, not one text
            stream.write("\n")

    def manifest(self) -> Manifest | None:
        """The manifest of the last batch that finished here, or None when there is none. One that
        cannot be read is a :class:`UsageError` saying so."""
        path = self.path / MANIFEST_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"{path} cannot be read: {error}") from None
        try:
            data = json.loads(text)
        except ValueError as error:
            raise UsageError(f"{path} is not JSON ({error}); rerun that batch's grader grade command") from None
        return Manifest.from_dict(data, str(path))

    def stored_results(self, rows: Iterable[StudentRow]) -> Iterator[tuple[str, SubmissionResult]]:
        """``(student_id, result)`` for every row with a stored result, read one at a time."""
        for row in rows:
            if row.has_result:
                result = self.stored(row.student_id)
                if result is not None:
                    yield row.student_id, result


class StudentPages:
    """Writes students' pages into a folder, each atomically, and only those whose text changed:
    replacing an existing file makes ext4 flush it to disk (auto_da_alloc), which for thousands of
    pages takes far longer than rendering them, and a rerun renders the same bytes. ``finish()``
    removes the pages of students no longer in the batch."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.written: set[str] = set()
        folder.mkdir(parents=True, exist_ok=True)
        atomic.remove_leftovers(folder)

    def write(self, student_id: str, html: str) -> None:
        path = self.folder / f"{student_id}.html"
        self.written.add(path.name)
        try:
            if path.read_text(encoding="utf-8") == html:
                return
        except (OSError, UnicodeDecodeError):
            pass
        # Not synced to disk: a page is made again from the results by the next grader report.
        atomic.write_text(path, html, durable=False)

    def finish(self) -> Path:
        for stale in self.folder.glob("*.html"):
            if stale.name not in self.written:
                stale.unlink(missing_ok=True)
        return self.folder


def _dump_mapping(entries: Iterable[tuple[str, object]], stream: TextIO) -> None:
    """Write ``entries`` (distinct keys) as ``json.dumps(dict(entries), indent=2, ensure_ascii=False)``
    and a newline would, one entry at a time: a class of thousands is never one document, nor one text."""
    separator = "{\n"
    for key, value in entries:
        # A JSON text holds no raw newline inside its strings, so each newline starts a line to indent.
        text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
        stream.write(f"{separator}  {json.dumps(key, ensure_ascii=False)}: {text}")
        separator = ",\n"
    stream.write("{}\n" if separator == "{\n" else "\n}\n")
