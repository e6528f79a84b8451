"""Find the submissions to grade, and the student each belongs to.

Accepted layouts (``SUBMISSIONS`` of ``grader grade``):

* a folder of ``<student-id>.py`` files;
* a folder of ``<student-id>/`` folders, each holding the assignment's submission file;
* an LMS bulk download, where file names carry the student. Canvas:
  ``<name>_<user id>_<submission id>_<file name>``, with an optional ``_late`` after the name,
  and ``<file>-1.py`` for a re-upload; the student id is ``<name>_<user id>``;
* a ``.zip`` of any of these, unpacked safely into the output folder (no entry may escape it,
  no links, bounded sizes and counts, so a zip bomb stops early with a clear message).

Problems that concern one student (two files for the same id, a file too large, a name that
cannot name a file) become per-student problems; the batch goes on. A folder with nothing to
grade is a :class:`~grader.errors.UsageError`.
"""

from __future__ import annotations

import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader.errors import UsageError
from grader.submission import MAX_SUBMISSION_BYTES

_CANVAS = re.compile(r"^(?P<name>[A-Za-z0-9]+?)(?:_LATE|_late)?_(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)$")
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$")
MAX_ZIP_ENTRIES = 20_000
MAX_ZIP_TOTAL = 512 * 1024 * 1024      # bytes unpacked, all entries together
MAX_ZIP_RATIO = 200                    # unpacked / packed for one entry: more is a bomb


@dataclass(frozen=True)
class Found:
    student_id: str
    path: Path


@dataclass
class Discovery:
    submissions: list[Found] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)  # student id (or entry name) -> what is wrong
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (path under SUBMISSIONS, why it is not one)


def discover(source: Path, submission_name: str, unpack_to: Path) -> Discovery:
    """Everything gradable in ``source`` (a folder or a .zip), sorted by student id."""
    if not source.exists():
        raise UsageError(f"{source} does not exist")
    if source.is_file():
        if not zipfile.is_zipfile(source):
            raise UsageError(f"{source} is neither a folder nor a .zip of submissions")
        folder = _unzip(source, unpack_to)
    else:
        folder = source
    found = _scan(folder, submission_name)
    if not found.submissions and not found.problems:
        raise UsageError(f"nothing to grade in {source}: expected <student-id>.py files, <student-id>/"
                         f"{submission_name} folders, a Canvas download or a .zip of one of these")
    found.submissions.sort(key=lambda item: item.student_id)
    return found


def _scan(folder: Path, submission_name: str) -> Discovery:
    entries = [e for e in sorted(folder.iterdir()) if not e.name.startswith((".", "__MACOSX"))]
    # A zip often wraps everything in one folder: look inside it.
    if len(entries) == 1 and entries[0].is_dir() and not (entries[0] / submission_name).is_file():
        return _scan(entries[0], submission_name)
    candidates: dict[str, list[Path]] = {}
    result = Discovery()
    for entry in entries:
        student, path = _student_of(entry, submission_name)
        if student is None:
            continue
        if not _SAFE_ID.match(student):
            result.problems[student[:128] or "?"] = (f"{entry.name}: the student id {student[:60]!r} has characters "
                                                     "that cannot name a result file")
            continue
        candidates.setdefault(student, []).append(path)
    for student, paths in candidates.items():
        problem = _problem(paths, folder)
        if problem:
            result.problems[student] = problem
        else:
            result.submissions.append(Found(student, paths[0]))
    return result


def _student_of(entry: Path, submission_name: str) -> tuple[str | None, Path]:
    """(student id, file) for one entry of the submissions folder; (None, _) when it is not one."""
    if entry.is_dir() and not entry.is_symlink():
        return entry.name, entry / submission_name
    if entry.suffix != ".py":
        return None, entry
    canvas = _CANVAS.match(entry.name)
    if canvas:
        stem = Path(submission_name).stem
        if not re.fullmatch(rf"{re.escape(stem)}(-\d+)?\.py", canvas["file"]):
            return None, entry  # another file of that student's, not the submission
        return f"{canvas['name']}_{canvas['user']}", entry
    return entry.stem, entry


def _problem(paths: list[Path], folder: Path) -> str | None:
    if len(paths) > 1:
        names = ", ".join(sorted(str(p.relative_to(folder)) for p in paths))
        return f"more than one submission for this student ({names}); keep one and rerun"
    path = paths[0]
    if path.is_symlink() or (path.exists() and not path.is_file()):
        return f"{path.name} is not a regular file"
    if not path.exists():
        return f"no {path.name} in {path.parent.name}/"
    size = path.stat().st_size
    if size > MAX_SUBMISSION_BYTES:
        return f"{path.name} is {size:,} bytes; a submission may be at most {MAX_SUBMISSION_BYTES:,}"
    return None


def _unzip(archive: Path, target: Path) -> Path:
    """Unpack ``archive`` into ``target`` (emptied first) without ever writing outside it."""
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    total = 0
    with zipfile.ZipFile(archive) as bundle:
        members = bundle.infolist()
        if len(members) > MAX_ZIP_ENTRIES:
            raise UsageError(f"{archive} holds {len(members):,} entries; at most {MAX_ZIP_ENTRIES:,} are accepted")
        for member in members:
            name = PurePosixPath(member.filename)
            if member.is_dir() or name.name.startswith(".") or "__MACOSX" in name.parts:
                continue
            if name.is_absolute() or ".." in name.parts or "\\" in member.filename:
                raise UsageError(f"{archive}: the entry {member.filename!r} would be written outside the "
                                 "output folder; the zip was not unpacked")
            if stat.S_ISLNK(member.external_attr >> 16):
                raise UsageError(f"{archive}: the entry {member.filename!r} is a link; the zip was not unpacked")
            total += member.file_size
            ratio = member.file_size / max(member.compress_size, 1)
            if total > MAX_ZIP_TOTAL or (member.file_size > 1_000_000 and ratio > MAX_ZIP_RATIO):
                raise UsageError(f"{archive} unpacks to more than it should ({member.filename!r}: "
                                 f"{member.file_size:,} bytes from {member.compress_size:,}); a zip bomb?")
            destination = target.joinpath(*name.parts)
            destination.parent.mkdir(parents=True, exist_ok=True)
            with bundle.open(member) as source, open(destination, "wb") as sink:
                # Copy with a cap: the sizes in the zip's directory can lie.
                shutil.copyfileobj(_Capped(source, member.file_size), sink)
    return target


class _Capped:
    """A reader that refuses to deliver more bytes than the zip directory declared."""

    def __init__(self, stream, limit: int):
        self.stream, self.left = stream, limit

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(min(size if size >= 0 else self.left + 1, self.left + 1))
        if len(chunk) > self.left:
            raise UsageError("a zip entry is larger than its header says; the zip was not unpacked")
        self.left -= len(chunk)
        return chunk
