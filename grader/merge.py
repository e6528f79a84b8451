"""``grader merge``: the output folders of several batches (the shards of a class) made into one.

Reads each folder's manifest and results, never regrades: the merged folder gets every student's
result file (and Gradescope file, where its batch wrote one), and the gradebook, the summary, the
manifest and the class report a single batch of the whole class would have written, byte for byte:
the merge announces the end of the merged class to the outputs a batch writes them with
(:mod:`grader.report.outputs`), and the summary is :func:`grader.summary.class_summary`'s. And
``batch.json``, so a later ``grader grade`` into it resumes.

Refused, before anything is written: folders whose results are of another assignment digest, seed
or grader version; a student in two folders with different results; a folder whose last batch did
not finish; shards of a class with one missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import grader.atomic as atomic
from grader.errors import UsageError
from grader.manifest import Manifest
from grader.outdir import OutputFolder
from grader.records import record
from grader.report.output_files import GradebookFiles
from grader.report.outputs import BatchEnd, Completed, Outputs
from grader.reporting import ClassReport
from grader.results import SubmissionResult
from grader.scoring import StudentRow
from grader.summary import ClassSummary, class_summary

IDENTITIES_FILE = "identities.json"   # written by main's batch (issue 19): merged when present


@record
class Merged:
    rows: list[StudentRow]
    summary: ClassSummary
    manifest: Manifest
    report: Path            # the class report written


@record
class _Source:
    folder: OutputFolder
    manifest: Manifest


def merge_outputs(sources: Sequence[Path], out: Path) -> Merged:
    """Merge the batches in ``sources`` into ``out`` (see the module's docstring for what is refused)."""
    folders = _read(sources, out)
    first = folders[0].manifest
    _check_shards(folders)
    entries: dict[str, tuple[_Source, SubmissionResult | None, str | None]] = {}
    for source in folders:
        for student, problem in source.manifest.students.items():
            result = None if problem is not None else _result(source, student)
            previous = entries.get(student)
            if previous is None:
                entries[student] = (source, result, problem)
            elif _verdict(previous[1], previous[2]) != _verdict(result, problem):
                raise UsageError(f"{student} is in {previous[0].folder.path} and in {source.folder.path} with "
                                 "different results: merge folders of different students (the shards of a "
                                 "class), or regrade one of them")
    late = {student for source in folders for student, identity in source.folder.identities().items()
            if identity.late and student in source.manifest.students}
    rows = [StudentRow.of(student, result, problem, first.max_score, late=student in late)
            for student, (_, result, problem) in sorted(entries.items())]
    manifest = Manifest(first.assignment, first.assignment_digest, first.seed, first.grader_version, first.max_score,
                        first.columns, {row.student_id: None if row.has_result else row.error for row in rows},
                        tuple(sorted({item for source in folders for item in source.manifest.ignored})),
                        title=first.title)
    summary = class_summary(manifest, rows)

    target = OutputFolder(out)
    target.prepare()
    target.record_seed(manifest.assignment, manifest.assignment_digest, manifest.seed)
    target.record_rendering(None)   # until every result file in it is known to be rendered alike
    copied = set()
    for student, (source, result, _) in sorted(entries.items()):
        if result is not None:
            _copy(source.folder.result_file(student), target.result_file(student))
            copied.add(f"{student}.json")
            gradescope = source.folder.gradescope / f"{student}.json"
            if gradescope.is_file():
                _copy(gradescope, target.gradescope / f"{student}.json")
    _merge_identities(folders, target, set(entries))
    os.sync()  # the copies, each without a sync of its own: one for all is much faster
    rendered = {source.folder.rendered_with() for source in folders}
    if len(rendered) == 1 and all(path.name in copied for path in target.results.glob("*.json")):
        target.record_rendering(rendered.pop())
    report = ClassReport()
    announce = Outputs([GradebookFiles(), report])
    announce.finished(BatchEnd(target, rows, manifest, summary))
    target.save_manifest(manifest)  # after the gradebook, as a batch writes it
    announce.completed(Completed(target, summary))
    assert report.files is not None
    return Merged(rows, summary, manifest, report.files.html)


def _read(sources: Sequence[Path], out: Path) -> list[_Source]:
    if not sources:
        raise UsageError("nothing to merge: pass the output folders of the batches (grader merge OUT1 OUT2 ... "
                         "--out OUT)")
    folders = []
    for path in sources:
        if not path.is_dir():
            raise UsageError(f"{path} is not a folder: pass the --out folders of the batches to merge")
        if path.resolve() == out.resolve():
            raise UsageError(f"--out {out} is one of the folders to merge: merge into a new folder")
        manifest = OutputFolder(path).manifest()
        if manifest is None:
            raise UsageError(f"{path} holds no finished batch (no manifest.json): run, or rerun, its grader grade "
                             "command to the end first")
        folders.append(_Source(OutputFolder(path), manifest))
    first = folders[0]
    names = ("assignment", "assignment digest", "seed", "grader version")
    for source in folders[1:]:
        for name, mine, theirs in zip(names, first.manifest.agreement(), source.manifest.agreement()):
            if mine != theirs:
                raise UsageError(f"{source.folder.path} was graded with {name} {theirs}, {first.folder.path} with "
                                 f"{mine}: only batches of the same assignment, seed and grader merge (grade every "
                                 "shard with the same --seed and the same grader)")
        if source.manifest.columns != first.manifest.columns or source.manifest.max_score != first.manifest.max_score:
            raise UsageError(f"{source.folder.path} and {first.folder.path} have different scenario columns")
    return folders


def _check_shards(folders: list[_Source]) -> None:
    """Every shard of an N-way split must be there: a gradebook missing a shard's students would
    look complete."""
    counts = {source.manifest.shard.count for source in folders if source.manifest.shard is not None}
    for count in sorted(counts):
        present = {source.manifest.shard.index for source in folders
                   if source.manifest.shard is not None and source.manifest.shard.count == count}
        missing = [f"{index}/{count}" for index in range(1, count + 1) if index not in present]
        if missing:
            raise UsageError(f"shard{'s' if len(missing) > 1 else ''} {', '.join(missing)} of the class "
                             f"{'are' if len(missing) > 1 else 'is'} missing: pass every shard's output folder")


def _result(source: _Source, student: str) -> SubmissionResult:
    """A student's stored result, checked against its manifest (a later run that did not finish may
    have replaced it)."""
    result = source.folder.stored(student)
    where = source.folder.result_file(student)
    if result is None:
        raise UsageError(f"{where} is missing or unreadable: rerun that batch's grader grade command")
    found = (result.assignment, result.assignment_digest, result.seed, result.grader_version)
    if found != source.manifest.agreement():
        raise UsageError(f"{where} is not of the batch its manifest describes (a later run into "
                         f"{source.folder.path} did not finish?): rerun that batch's grader grade command")
    return result


def _verdict(result: SubmissionResult | None, problem: str | None) -> tuple:
    """What two gradings of a submission must agree on to be the same result: the content graded
    and every point (not timings, nor the path it was read from, which differ between machines)."""
    if result is None:
        return ("problem", problem)
    return (result.submission_sha256, result.score, result.max_score, result.error,
            tuple((s.id, s.status, s.points) for s in result.scenarios))


def _merge_identities(folders: list[_Source], target: OutputFolder, students: set[str]) -> None:
    """``identities.json`` (each student's LMS identity, where a batch writes one; the report and the
    LMS gradebooks read it): every folder's entries for its own students, one file, sorted by id."""
    merged: dict[str, object] = {}
    for source in folders:
        path = source.folder.path / IDENTITIES_FILE
        if path.is_file():
            document = json.loads(path.read_text(encoding="utf-8"))
            merged.update({student: document[student] for student in source.manifest.students
                           if student in document and student not in merged})
    if merged:
        atomic.write_text(target.path / IDENTITIES_FILE, json.dumps(
            {student: merged[student] for student in sorted(merged) if student in students},
            indent=2, ensure_ascii=False) + "\n", durable=False)


def _copy(source: Path, target: Path) -> None:
    """A copy that a reader sees whole or not at all (through a temporary name, like every file in
    OUT); synced to disk all at once, before the manifest that lists it (see :func:`merge_outputs`)."""
    atomic.write_text(target, source.read_text(encoding="utf-8"), durable=False)
