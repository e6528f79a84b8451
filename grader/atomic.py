"""Atomic file writes: a reader (or a rerun after SIGKILL) sees the old file or the new one, never half.

A file written here gets the permissions of any file its user makes: 0666 less the umask (0644 with
the usual 022), as the shell, cp or an editor would give it; who may read a folder's files is the
folder's and the umask's business (:meth:`grader.outdir.OutputFolder.prepare` makes a new OUT
private: grades are personal data).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO


def write_text(path: Path, text: str, durable: bool = True) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and ``os.replace``.
    ``durable=False`` skips the sync to disk: for a cache, where losing the file costs nothing."""
    with replacing(path, durable) as stream:
        stream.write(text)


def write_bytes(path: Path, data: bytes, durable: bool = True) -> None:
    """:func:`write_text` for bytes (a zip)."""
    with _temporary(path) as handle, os.fdopen(handle, "wb") as stream:
        stream.write(data)
        stream.flush()
        if durable:
            os.fsync(stream.fileno())


@contextlib.contextmanager
def replacing(path: Path, durable: bool = True) -> Iterator[TextIO]:
    """A text stream (UTF-8, no newline translation) that becomes ``path`` only if the block ends
    without an exception: written to a temporary file in the same folder, synced, renamed."""
    with _temporary(path) as handle, os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
        yield stream
        stream.flush()
        if durable:
            os.fsync(stream.fileno())


@contextlib.contextmanager
def _temporary(path: Path) -> Iterator[int]:
    """The descriptor of a new temporary file beside ``path``, renamed to ``path`` when the block
    ends without an exception (the caller has closed it by then), removed when it raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = _created(path)
    try:
        yield handle
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


def _created(path: Path) -> tuple[int, str]:
    """A new, empty ``.<name>.XXXXXXXX.tmp`` beside ``path``: its descriptor and name. Made by the
    kernel with 0666 less the umask (``tempfile.mkstemp`` would give 0600, and a rename keeps it)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    for _ in range(100):
        temporary = str(path.parent / f".{path.name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:   # a name already taken (a killed run's leftover): another one
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def unwritable(path: Path, folder: bool = False) -> str | None:
    """Why ``path`` (a file, or a ``folder``) cannot be written, or None when it can be made there."""
    for ancestor in (path, *path.parents):
        if not ancestor.exists():
            continue
        if ancestor == path:
            if folder != path.is_dir():
                return f"{path} is {'a file' if folder else 'a folder'}"
            return None if os.access(path, os.W_OK) else f"{path} is not writable"
        if not ancestor.is_dir():
            return f"{ancestor} is a file, not a folder"
        return None if os.access(ancestor, os.W_OK | os.X_OK) else f"{ancestor} is not writable"
    return None


def refusal(path: Path, option: str, folder: bool = False) -> str | None:
    """Why ``path``, given as the command-line ``option``, cannot be written, said as a usage error
    says it (what to do included); None when it can."""
    problem = unwritable(path, folder=folder)
    return None if problem is None else f"{option} {path}: cannot write there: {problem}; choose another path"


def remove_leftovers(folder: Path) -> None:
    """Delete temporary files a killed run left behind (they were never renamed into place)."""
    if folder.is_dir():
        for leftover in folder.glob(".*.tmp"):
            leftover.unlink(missing_ok=True)
