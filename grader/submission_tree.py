"""The files and folders under SUBMISSIONS, read alike from a folder or from a zip's directory.

A folder is walked without following links (a link is an item of its own, never a way out); a zip
is only listed (:func:`grader.safe_unzip.read_directory`), never unpacked here. Names ignored by
rule (:func:`grader.lms_names.ignore_rule`) are left out wherever they appear and recorded once,
with why, in the ``ignored`` mapping the caller passes in.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import NamedTuple

from grader.errors import UsageError
from grader.lms_names import ignore_rule, shown
from grader.records import record
from grader.safe_unzip import ZipEntry


class Ignored(NamedTuple):
    """A file or folder not graded and not anyone's error: its path inside SUBMISSIONS (a folder
    ends in '/') and why."""

    path: str
    why: str


class Kind(Enum):
    FILE = "file"
    FOLDER = "folder"
    LINK = "symbolic link"
    SPECIAL = "special file"


@record
class Item:
    """A file or folder under SUBMISSIONS, from a folder walk or a zip's directory alike.

    ``origin``: its path from the top of SUBMISSIONS; ``parts``: from the top once a wrapping
    folder is looked through (what names the student)."""

    origin: tuple[str, ...]
    kind: Kind
    size: int = 0
    error: str | None = None            # a folder that could not be listed: why
    entry: ZipEntry | None = None       # the zip entry to unpack, for a zip
    depth: int = 0                      # wrapping folders looked through

    @property
    def parts(self) -> tuple[str, ...]:
        return self.origin[self.depth:]

    @property
    def path(self) -> str:
        """As shown to people: from the top of SUBMISSIONS, a folder ending in '/'."""
        return shown("/".join(self.origin)) + ("/" if self.kind is Kind.FOLDER else "")


def folder_items(root: Path, ignored: dict[str, Ignored], exclude: Path | None = None) -> list[Item]:
    """Every file and folder under ``root`` (links not followed), minus what is ignored by rule
    and the folder ``exclude``."""
    try:
        excluded = os.stat(exclude)[1:3] if exclude is not None else None  # (inode, device)
    except OSError:
        excluded = None
    items: list[Item] = []
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        folder, parts = stack.pop()
        try:
            with os.scandir(folder) as listing:
                children = sorted(listing, key=lambda child: child.name)
        except OSError as error:
            if parts:
                items.append(Item(parts, Kind.FOLDER, error=error.strerror or str(error)))
                continue
            raise UsageError(f"{root} cannot be read ({error.strerror}); check its permissions") from error
        if parts:
            items.append(Item(parts, Kind.FOLDER))
        for child in children:
            path = (*parts, child.name)
            if _ignored(path, ignored, child.is_dir(follow_symlinks=False)):
                continue
            if child.is_symlink():
                items.append(Item(path, Kind.LINK))
            elif child.is_dir(follow_symlinks=False):
                if excluded is not None and os.lstat(child.path)[1:3] == excluded:
                    shown_path = shown("/".join(path)) + "/"
                    ignored[shown_path] = Ignored(shown_path, "this run's output folder (--out)")
                    continue
                stack.append((Path(child.path), path))
            elif child.is_file(follow_symlinks=False):
                # os.lstat, not child.stat(): a DirEntry keeps the stat it made, and the listing
                # of a class of thousands is held until the folder is done.
                items.append(Item(path, Kind.FILE, os.lstat(child.path).st_size))
            else:
                items.append(Item(path, Kind.SPECIAL))
    return items


def zip_items(entries: list[ZipEntry], ignored: dict[str, Ignored]) -> list[Item]:
    """The zip's entries as items, minus what is ignored by rule (an ignored folder is listed once)."""
    items = []
    for entry in entries:
        if any(_ignored(entry.parts[:depth], ignored, depth < len(entry.parts) or entry.is_dir)
               for depth in range(1, len(entry.parts) + 1)):
            continue
        if entry.is_dir:
            items.append(Item(entry.parts, Kind.FOLDER))
        else:
            items.append(Item(entry.parts, Kind.FILE, entry.size, entry=entry))
    return items


def _ignored(parts: tuple[str, ...], ignored: dict[str, Ignored], is_folder: bool) -> bool:
    rule = ignore_rule(parts[-1])
    if rule is not None:
        path = shown("/".join(parts)) + ("/" if is_folder else "")
        ignored.setdefault(path, Ignored(path, rule.value))
    return rule is not None
