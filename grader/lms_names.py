"""What a file's name says: whose submission it is, whether it is one, and whether to ignore it.

Pure functions over names (no file system). Three naming systems are understood:

* **Canvas** "Download Submissions": ``<name>[_LATE]_<user id>_<file id>_<file name>``, where
  ``<name>`` is the student's sortable name, lower-cased and (in current Canvas) stripped of
  everything but letters, digits and ``_`` (older Canvas kept hyphens, so any character is
  accepted); with anonymous grading ``[LATE_]anon_<anonymous id>_<file id>_<file name>``. Canvas
  renames a student's re-upload ``autodiff-1.py``. The student id is ``<name>_<user id>``
  (``anon_<anonymous id>`` when anonymous).
* **Moodle** "Download all submissions": ``<Full Name>_<participant id>_assignsubmission_file_<file
  name>``, or with "Download submissions in folders" (the default since Moodle 3.1) a folder
  ``<Full Name>_<participant id>_assignsubmission_file_/`` holding the files as uploaded. Moodle
  replaces ``_`` in the name by a space, so the name ends at the first ``_<digits>_assignsubmission_``.
  The participant id is the assignment's own id for the student (the ``Participant <id>`` of
  Moodle's grading worksheet), not the Moodle user id. The student id is ``<Full Name>_<participant id>``.
* **Plain** names an instructor made: ``<student id>.py`` (or ``.ipynb``), or a folder
  ``<student id>/`` holding the submission.

Everywhere, a browser's copy marker ``" (N)"`` before the extension and the case of the extension
are not part of a name (``carl.PY`` is carl's, ``alice (1).py`` is alice's second copy), and
student ids are compared in Unicode NFC (a macOS-made ``garcía`` is the same student as a
Windows-made one).
"""

from __future__ import annotations

import re
import unicodedata
from enum import Enum

from grader.records import record

# A result is written as results/<id>.json through a temporary ".<id>.json.XXXXXXXX.tmp" beside it
# (grader.atomic): the longest name of the two must fit Linux's 255-byte limit.
_LONGEST_DECORATION = len(".") + len(".json") + len(".XXXXXXXX.tmp")
MAX_ID_BYTES = 255 - _LONGEST_DECORATION

_COPY_MARKER = re.compile(r" \(\d+\)$")          # "autodiff (1)": a browser's second download
_REUPLOAD_MARKER = re.compile(r"-\d+$")           # "autodiff-1": Canvas's name for a re-upload
_MOODLE_FILE = re.compile(
    r"^(?P<name>.*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[A-Za-z0-9]+)_(?P<file>.+)$", re.DOTALL)
_MOODLE_FOLDER = re.compile(r"^(?P<name>.*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[A-Za-z0-9]+)_?$",
                            re.DOTALL)
_CANVAS_ANONYMOUS = re.compile(
    r"^(?:(?P<late>LATE|late)_)?anon_(?P<anonymous>[A-Za-z0-9]+)_(?P<file_id>\d+)_(?P<file>.+)$", re.DOTALL)
_CANVAS = re.compile(r"^(?P<name>.*?)(?:_(?P<late>LATE|late))?_(?P<user>\d+)_(?P<file_id>\d+)_(?P<file>.+)$",
                     re.DOTALL)


class NameSystem(str, Enum):
    """Which naming a submission's name followed (and so which LMS can match its student)."""

    CANVAS = "canvas"
    MOODLE = "moodle"
    PLAIN = "plain"


@record
class Identity:
    """What an LMS needs to find the student again: parsed from the download's name, never guessed.

    ``lms_id``: Canvas's user id (``None`` under anonymous grading), Moodle's participant id.
    ``file_id``: Canvas's id of the uploaded file. ``late``: Canvas marked the submission late, or
    (``late_by`` ``"deadline"``) it came after the batch's ``--deadline`` (:mod:`grader.lateness`).
    """

    system: NameSystem
    display_name: str
    lms_id: str | None = None
    file_id: str | None = None
    late: bool = False
    late_by: str = ""             # "" (the name's mark) or "deadline"

    @property
    def gradebook_key(self) -> str | None:
        """The value an LMS's grade import matches a row on: Canvas's ``ID`` column (the user id),
        Moodle's grading worksheet ``Identifier`` (``Participant <id>``); ``None`` for plain names."""
        if self.system is NameSystem.MOODLE:
            return f"Participant {self.lms_id}"
        return self.lms_id if self.system is NameSystem.CANVAS else None


@record
class Owner:
    """Whose a top-level entry of SUBMISSIONS is: the student id, the identity, and for an LMS's
    renamed file, the file's own name (``autodiff.py`` in ``smithjohn_1_2_autodiff.py``)."""

    student_id: str
    identity: Identity
    inner_name: str | None = None


class Role(Enum):
    """What a file is to its student."""

    SUBMISSION = "named like the submission"
    OTHER_CODE = "code under another name"
    OTHER = "not code"


class IgnoreRule(Enum):
    """Names ignored wherever they appear: what operating systems and tools add, never a student's work."""

    MACOS_ZIP_METADATA = "macOS zip metadata (__MACOSX/), never a student's file"
    MACOS_FINDER = "macOS Finder metadata (.DS_Store, ._*)"
    WINDOWS_EXPLORER = "Windows Explorer metadata (Thumbs.db, desktop.ini)"
    BYTECODE_CACHE = "Python's bytecode cache (__pycache__/)"
    HIDDEN = "hidden: the name starts with '.' (.git/, .ipynb_checkpoints/, editor files)"


def ignore_rule(name: str) -> IgnoreRule | None:
    """The rule that ignores a file or folder of this name, or None."""
    if name == "__MACOSX":
        return IgnoreRule.MACOS_ZIP_METADATA
    if name == ".DS_Store" or name.startswith("._"):
        return IgnoreRule.MACOS_FINDER
    if name.lower() in ("thumbs.db", "desktop.ini"):
        return IgnoreRule.WINDOWS_EXPLORER
    if name == "__pycache__":
        return IgnoreRule.BYTECODE_CACHE
    if name.startswith("."):
        return IgnoreRule.HIDDEN
    return None


def split_suffix(name: str) -> tuple[str, str]:
    """("autodiff", ".py") for "autodiff.py"; the suffix keeps its case; ("", "") has no suffix."""
    stem, dot, suffix = name.rpartition(".")
    return (stem, f".{suffix}") if dot and stem else (name, "")


def without_copy_marker(stem: str) -> str:
    """"alice (1)" -> "alice": the marker a browser adds to a second download of the same file."""
    return _COPY_MARKER.sub("", stem)


def is_code(name: str, suffixes: tuple[str, ...]) -> bool:
    """Whether the name ends in one of ``suffixes`` (".py", ".ipynb"), in any case."""
    return split_suffix(name)[1].lower() in suffixes


def role_of(name: str, submission_name: str, suffixes: tuple[str, ...]) -> Role:
    """Whether a student's file ``name`` is the submission: the submission's stem in any case,
    with or without a copy marker " (N)" or Canvas's re-upload marker "-N", and one of
    ``suffixes``. ``autodiff.py``, ``Autodiff.PY``, ``autodiff (1).py``, ``autodiff-2.py`` and
    ``autodiff.ipynb`` are all named like ``autodiff.py``."""
    stem, suffix = split_suffix(name)
    if suffix.lower() not in suffixes:
        return Role.OTHER
    wanted = split_suffix(submission_name)[0].casefold()
    stem = without_copy_marker(stem).casefold()
    return Role.SUBMISSION if stem == wanted or _REUPLOAD_MARKER.sub("", stem) == wanted else Role.OTHER_CODE


def owner_of_file(name: str) -> Owner:
    """Whose a file at the top of SUBMISSIONS is, from its name alone."""
    moodle = _MOODLE_FILE.match(name)
    if moodle:
        return _moodle(moodle, moodle["file"])
    anonymous = _CANVAS_ANONYMOUS.match(name)
    if anonymous:
        student = f"anon_{anonymous['anonymous']}"
        return Owner(_normal(student), Identity(NameSystem.CANVAS, student, None, anonymous["file_id"],
                                                late=bool(anonymous["late"])), anonymous["file"])
    canvas = _CANVAS.match(name)
    if canvas:
        return Owner(_normal(f"{canvas['name']}_{canvas['user']}"),
                     Identity(NameSystem.CANVAS, canvas["name"], canvas["user"], canvas["file_id"],
                              late=bool(canvas["late"])), canvas["file"])
    stem, _ = split_suffix(name)
    student = _normal(without_copy_marker(stem))
    return Owner(student, Identity(NameSystem.PLAIN, student))


def owner_of_folder(name: str) -> Owner:
    """Whose a folder at the top of SUBMISSIONS is: Moodle's folder form, else a plain student id."""
    moodle = _MOODLE_FOLDER.match(name)
    if moodle:
        return _moodle(moodle, None)
    student = _normal(without_copy_marker(name))
    return Owner(student, Identity(NameSystem.PLAIN, student))


def is_lms_folder(name: str) -> bool:
    """A folder named by an LMS for one student (never a wrapper around a class)."""
    return _MOODLE_FOLDER.match(name) is not None


def _moodle(match: re.Match, inner_name: str | None) -> Owner:
    student = _normal(f"{match['name']}_{match['participant']}")
    return Owner(student, Identity(NameSystem.MOODLE, _normal(match["name"]), match["participant"]), inner_name)


def _normal(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def id_problem(student_id: str) -> str | None:
    """Why ``student_id`` cannot name its result file ``results/<id>.json``, and what to do; None
    when it can. Linux refuses only '/', NUL, the names '.' and '..', and names over 255 bytes; the
    outputs are UTF-8 text, so a name must also be UTF-8."""
    if student_id in ("", ".", ".."):
        return f"the student id {student_id!r} cannot name a file; rename the submission after the student"
    for character, described in (("/", "'/'"), ("\0", "a NUL character")):
        if character in student_id:
            return (f"the student id contains {described} (at character {student_id.index(character) + 1}), "
                    "which no file name may hold; rename the submission without it")
    try:
        size = len(student_id.encode("utf-8"))
    except UnicodeEncodeError as error:
        # os.listdir hands a byte that is not UTF-8 over as a lone surrogate U+DC80..U+DCFF.
        byte = ord(student_id[error.start]) - 0xDC00
        return (f"the name is not UTF-8 (byte 0x{byte:02X} at character {error.start + 1}), so it cannot be "
                "written in the UTF-8 gradebook; rename it in UTF-8 (e.g. convmv -f latin1 -t utf8 --notest NAME)")
    if size > MAX_ID_BYTES:
        return (f"the student id is {size} bytes long (UTF-8); a result file name allows {MAX_ID_BYTES}: "
                "shorten the submission's name")
    return None


def shown(text: str) -> str:
    """``text`` safe to print and to write as UTF-8: a name's bytes that are not UTF-8 as \\xNN.
    A text that is safe already is returned itself, not an equal copy (a class keeps one per student)."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
