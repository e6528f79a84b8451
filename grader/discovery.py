"""Find the submissions to grade in SUBMISSIONS, the student each belongs to, and account for every
other file: no student is ever silently lost.

``SUBMISSIONS`` (of ``grader grade``) is a folder or a ``.zip``, listed alike by
:mod:`grader.submission_tree` (a zip through :mod:`grader.safe_unzip`, which then unpacks only the
files to grade, into the output folder). A single folder wrapping everything
(as many zips have) is looked through. Each entry at the top belongs to one student, by its name
(:mod:`grader.lms_names`: Canvas and Moodle downloads, or plain ``<student-id>.py`` files and
``<student-id>/`` folders); several entries may belong to the same student. Every file under
SUBMISSIONS then ends up in exactly one of three places:

* :attr:`Discovery.submissions`: the one file graded for a student;
* :attr:`Discovery.problems`: a student who gets an error row, and why (two submissions, none,
  not a ``.py``/``.ipynb`` file, too large, unreadable, a link, a name that cannot name a result
  file, a zip entry that cannot be unpacked);
* :attr:`Discovery.ignored`: system files ignored by rule (:class:`~grader.lms_names.IgnoreRule`)
  and a student's other files beside their submission, each with why.

Which of a student's files is the submission (:func:`choose`, shared with ``gradescope-run``): the
files named like it (:func:`~grader.lms_names.role_of`: any case, copy markers, ``.ipynb``), the
shallowest in each of the student's entries; if there are none, the only ``.py``/``.ipynb`` file
of any other name. More than one candidate is a problem ("keep one"), never a guess.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import UsageError
from grader.lms_names import (
    MAX_ID_BYTES,
    Identity,
    NameSystem,
    Owner,
    Role,
    id_problem,
    is_code,
    is_lms_folder,
    owner_of_file,
    owner_of_folder,
    role_of,
    shown,
)
from grader.records import record
from grader.safe_unzip import read_directory, unpack
from grader.submission import MAX_SUBMISSION_BYTES
from grader.submission_tree import Ignored, Item, Kind, folder_items, zip_items

__all__ = ["DEFAULT_SUFFIXES", "Discovery", "Found", "Ignored", "choose", "discover", "find_submission"]

DEFAULT_SUFFIXES = (".py", ".ipynb")
_LISTED = 5  # names quoted in one message before "and N more"


@record
class Found:
    """A submission to grade: whose it is, the file to grade (``path``: ``origin`` inside ``root``,
    made when asked, so that a class of thousands holds a string each, not a Path), and where it
    was in SUBMISSIONS."""

    student_id: str
    root: Path                         # SUBMISSIONS, or where its zip was unpacked
    identity: Identity | None = None   # None only when made by hand: then a plain identity
    origin: str = ""                   # its path inside SUBMISSIONS (or the zip), '/'-separated

    def __post_init__(self) -> None:
        if self.identity is None:
            object.__setattr__(self, "identity", Identity(NameSystem.PLAIN, self.student_id))

    @property
    def path(self) -> Path:
        return self.root / self.origin if self.origin else self.root


@dataclass
class Discovery:
    submissions: list[Found] = field(default_factory=list)     # sorted by student id
    problems: dict[str, str] = field(default_factory=dict)     # student id -> what is wrong, what to do
    ignored: list[Ignored] = field(default_factory=list)       # in path order
    # Every student's, those with a problem too (an LMS import needs the id to post their 0).
    identities: dict[str, Identity] = field(default_factory=dict)


@record
class Choice:
    """Which of a student's files is the submission: ``picked``, or else the ``rivals`` that could
    all be it (none: nothing could be). ``named``: the candidates were named like the submission
    (else they are the code files of other names)."""

    picked: Item | None
    rivals: tuple[Item, ...] = ()
    named: bool = True


def discover(source: Path, submission_name: str, unpack_to: Path,
             suffixes: Sequence[str] = DEFAULT_SUFFIXES, *, exclude: Path | None = None) -> Discovery:
    """Account for every file in ``source`` (a folder or a .zip, unpacked into ``unpack_to``).
    ``exclude``: a folder that may lie inside ``source`` and is nobody's (the run's output folder)."""
    suffixes = tuple(suffix.lower() for suffix in suffixes)
    if not source.exists():
        raise UsageError(f"{source} does not exist")
    ignored: dict[str, Ignored] = {}
    is_zip = source.is_file()
    if is_zip:
        if not zipfile.is_zipfile(source):
            raise UsageError(f"{source} is neither a folder nor a .zip of submissions")
        items = zip_items(read_directory(source), ignored)
    else:
        items = folder_items(source, ignored, exclude)
    items = _unwrapped(items, submission_name, suffixes)
    found = Discovery()
    students = sorted(_by_student(items).items(), reverse=True)
    del items
    picked = []
    while students:  # in order, each student's sources let go once accounted for: a class of thousands peaks lower
        student, sources = students.pop()
        found.identities[_key(student)] = sources[0].owner.identity
        if chosen := _account(student, sources, submission_name, suffixes, found.problems, ignored):
            picked.append(chosen)
    failed: dict[str, str] = {}
    if is_zip:
        failed = unpack(source, [item.entry for _, item, _ in picked if item.entry is not None], unpack_to)
    root = unpack_to if is_zip else source
    for student, item, identity in picked:
        problem = (failed.get(item.entry.name) if item.entry is not None
                   else _unreadable(root.joinpath(*item.origin), item))
        if problem is None:
            found.submissions.append(Found(student, root, identity, "/".join(item.origin)))
        else:
            found.problems[_key(student)] = problem
    found.ignored = sorted(ignored.values())
    if not found.submissions and not found.problems:
        listed = (f" ({len(found.ignored)} ignored: {_listing([i.path for i in found.ignored])})"
                  if found.ignored else "")
        raise UsageError(f"nothing to grade in {source}{listed}: expected <student-id>.py files, <student-id>/"
                         f"{submission_name} folders, a Canvas or Moodle download, or a .zip of one of these")
    found.submissions.sort(key=lambda submission: submission.student_id)
    return found


def find_submission(folder: Path, submission_name: str,
                    suffixes: Sequence[str] = DEFAULT_SUFFIXES) -> tuple[Path | None, list[str]]:
    """One student's folder (Gradescope's ``/autograder/submission``): the file to grade, or None
    and the paths inside ``folder`` that could each be it (empty when none could)."""
    suffixes = tuple(suffix.lower() for suffix in suffixes)
    if not folder.is_dir():
        return None, []
    items = [item for item in folder_items(folder, {}) if item.kind is not Kind.FOLDER]
    choice = choose([(0, item, role_of(item.parts[-1], submission_name, suffixes)) for item in items])
    if choice.picked is not None:
        return folder.joinpath(*choice.picked.origin), []
    return None, [item.path for item in choice.rivals]


def choose(files: list[tuple[int, Item, Role]]) -> Choice:
    """The submission among one student's files, each ``(which of the student's entries, item, role)``."""
    named = [(source, item) for source, item, role in files if role is Role.SUBMISSION]
    if named:
        shallowest: dict[int, int] = {}
        for source, item in named:
            shallowest[source] = min(shallowest.get(source, len(item.parts)), len(item.parts))
        candidates = [item for source, item in named if len(item.parts) == shallowest[source]]
    else:
        candidates = [item for _, item, role in files if role is Role.OTHER_CODE]
    if len(candidates) == 1:
        return Choice(candidates[0], named=bool(named))
    return Choice(None, tuple(sorted(candidates, key=lambda item: item.path)), named=bool(named))


def _unwrapped(items: list[Item], submission_name: str, suffixes: tuple[str, ...]) -> list[Item]:
    """Look through a single folder that wraps everything (``download/alice.py``...), unless it is
    itself a student's: an LMS's student folder, or one holding a file named like the submission."""
    while True:
        tops = {item.parts[0] for item in items}
        inside = [item for item in items if len(item.parts) > 1]
        if len(tops) != 1 or not inside or is_lms_folder(next(iter(tops))):
            return items
        if any(item.error for item in items if len(item.parts) == 1):
            return items
        if any(len(item.parts) == 2 and item.kind is not Kind.FOLDER
               and role_of(item.parts[1], submission_name, suffixes) is Role.SUBMISSION for item in inside):
            return items
        items = [Item(item.origin, item.kind, item.size, item.error, item.entry, item.depth + 1) for item in inside]


# -- students -------------------------------------------------------------------------------------

@dataclass
class _Source:
    """One top-level entry of SUBMISSIONS (after any wrapping folder), and the files in it."""

    top: str
    owner: Owner
    is_folder: bool
    path: str                                           # as shown: "alice.py", "alice/"
    items: list[Item] = field(default_factory=list)     # its files (the entry itself, for a file)
    error: str | None = None                            # the folder could not be listed


def _by_student(items: list[Item]) -> dict[str, list[_Source]]:
    sources: dict[str, _Source] = {}
    for item in items:
        top = item.parts[0]
        is_folder = len(item.parts) > 1 or item.kind is Kind.FOLDER
        if top not in sources:
            owner = owner_of_folder(top) if is_folder else owner_of_file(top)
            shown_path = shown("/".join(item.origin[:item.depth + 1])) + ("/" if is_folder else "")
            sources[top] = _Source(top, owner, is_folder, shown_path)
        source = sources[top]
        if len(item.parts) == 1 and item.error:
            source.error = item.error
        if item.kind is not Kind.FOLDER:
            source.items.append(item)
    students: dict[str, list[_Source]] = {}
    for source in sources.values():
        students.setdefault(source.owner.student_id, []).append(source)
    return students


def _account(student: str, sources: list[_Source], submission_name: str, suffixes: tuple[str, ...],
             problems: dict[str, str], ignored: dict[str, Ignored]) -> tuple[str, Item, Identity] | None:
    """One student: their submission (returned with the identity its entry's name gives), or their
    problem (put in ``problems``); their other files go to ``ignored``."""
    key = _key(student)
    files = [(index, item, _role(source, item, submission_name, suffixes))
             for index, source in enumerate(sources) for item in source.items]
    choice = choose(files)
    mentioned: set[str] = {choice.picked.path} if choice.picked is not None else set()
    unreadable = next((source for source in sources if source.error), None)
    problem = id_problem(student)
    if problem is not None:
        problem = f"{_listing(sorted(source.path for source in sources))}: {problem}"
        mentioned = {source.path for source in sources}
    elif unreadable is not None:
        problem = f"{unreadable.path} could not be read ({unreadable.error}); fix its permissions and rerun"
    elif choice.picked is None:
        problem, mentioned = _no_choice(sources, choice, submission_name, suffixes)
    else:
        problem = _unfit(choice.picked)
    if problem is None:
        assert choice.picked is not None
        why = f"another file of {key}'s, not the submission (graded: {choice.picked.path})"
    else:
        problems[key] = problem
        why = f"another file of {key}'s, who has an error row"
    for _, item, _ in files:
        if item.path not in mentioned:
            ignored.setdefault(item.path, Ignored(item.path, why))
    if problem is not None or choice.picked is None:
        return None
    top = choice.picked.parts[0]
    return student, choice.picked, next(source.owner.identity for source in sources if source.top == top)


def _role(source: _Source, item: Item, submission_name: str, suffixes: tuple[str, ...]) -> Role:
    if source.is_folder:
        return role_of(item.parts[-1], submission_name, suffixes)
    if source.owner.inner_name is not None:  # an LMS's file: its own name says what it is
        return role_of(source.owner.inner_name, submission_name, suffixes)
    # A plain <student-id>.py: named after the student, so any submission suffix makes it theirs.
    return Role.SUBMISSION if is_code(item.parts[-1], suffixes) else Role.OTHER


def _no_choice(sources: list[_Source], choice: Choice, submission_name: str,
               suffixes: tuple[str, ...]) -> tuple[str, set[str]]:
    """Why nothing could be picked, and the files the message names."""
    if choice.rivals:
        names = [item.path for item in choice.rivals]
        if choice.named:
            return f"more than one submission for this student ({_listing(names)}); keep one and rerun", set(names)
        return (f"no {submission_name} for this student, and more than one file could be it ({_listing(names)}); "
                f"rename the one to grade {submission_name} and rerun"), set(names)
    kinds = " or ".join(suffixes)
    files = sorted(item.path for source in sources for item in source.items)
    if len(sources) == 1 and sources[0].is_folder:
        where = f"no {submission_name} in {sources[0].path}"
        if not files:
            return where, set()
        return f"{where} (it holds {_listing(files)}, none of them a {kinds} file)", set(files)
    return (f"{_listing(files)}: not a {kinds} file, so not a submission; if it is the student's work, "
            f"rename it to end in {suffixes[0]} and rerun"), set(files)


def _unfit(item: Item) -> str | None:
    """Why the picked file cannot be graded (known from the listing alone), or None."""
    if item.kind is Kind.LINK:
        return f"{item.path} is a symbolic link, not a file; put the file itself there and rerun"
    if item.kind is Kind.SPECIAL:
        return f"{item.path} is not a regular file; put the submission file there and rerun"
    if item.size > MAX_SUBMISSION_BYTES:
        return (f"{item.path} is {item.size:,} bytes; a submission may be at most {MAX_SUBMISSION_BYTES:,} "
                "(check that the right file was handed in)")
    return None


def _unreadable(path: Path, item: Item) -> str | None:
    try:
        with open(path, "rb"):
            return None
    except OSError as error:
        return f"{item.path} could not be read ({error.strerror}); fix its permissions and rerun"


def _key(student: str) -> str:
    """The student's key in :class:`Discovery`'s mappings: the id itself when it is valid; printable
    (\\xNN for bytes that are not UTF-8), and shortened when refused for its length."""
    key = shown(student)
    return key if len(key.encode()) <= MAX_ID_BYTES else key[:117] + "..."


def _listing(names: list[str]) -> str:
    quoted = names[:_LISTED]
    more = len(names) - len(quoted)
    return ", ".join(quoted) + (f" and {more} more" if more else "")
