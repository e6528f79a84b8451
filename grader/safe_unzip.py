"""Read a zip of submissions without trusting it, and unpack only the files that will be graded.

The zip's central directory is read first, and the whole archive is refused
(:class:`~grader.errors.UsageError`) only for what would endanger the machine or write outside the
output folder: more than :data:`MAX_ENTRIES` entries, an entry whose name escapes (absolute, a
drive letter, ``..``), a symbolic link, or more than :data:`MAX_UNPACKED` bytes to unpack. Whatever
concerns one entry (too large, damaged, encrypted, a compression method Python cannot read, bigger
than its header says) is that entry's problem, returned to the caller, which makes it that
student's error row. Only the entries asked for are unpacked, each capped at the size its header
declares, so a highly compressible file elsewhere in the archive is never inflated at all.

Entry names are decoded as the zip standard (APPNOTE.TXT 4.4.4, appendix D) says, with two
documented additions for zips that do not set the UTF-8 flag (general purpose bit 11):

1. an Info-ZIP Unicode Path extra field (0x7075, APPNOTE 4.6.9) whose CRC matches the name is used;
2. otherwise a name whose bytes are valid UTF-8 is read as UTF-8 (what Info-ZIP's ``zip`` on Linux
   and macOS's tools write without setting the flag; CP437 text is almost never valid UTF-8 by
   chance), and any other name as CP437, the standard's default.

Backslashes count as folder separators (Windows tools write them, against the standard).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import struct
import time
import zipfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from grader.errors import UsageError
from grader.lms_names import shown
from grader.records import record

MAX_ENTRIES = 50_000                   # a class of 500 with 100 files each; listing them costs little
MAX_UNPACKED = 512 * 1024 * 1024       # bytes the grader unpacks, all entries together

_UTF8_FLAG = 0x800                     # general purpose bit 11: the name and comment are UTF-8
_ENCRYPTED_FLAG = 0x1
_UNICODE_PATH = 0x7075                 # Info-ZIP Unicode Path extra field
_DRIVE = re.compile(r"^[A-Za-z]:")


@record
class ZipEntry:
    """One entry of the archive's directory: its decoded name, split into folders, and sizes as declared."""

    name: str
    parts: tuple[str, ...]
    is_dir: bool
    size: int
    packed: int
    info: zipfile.ZipInfo


def read_directory(archive: Path) -> list[ZipEntry]:
    """Every entry of ``archive``, or a UsageError when the archive as a whole must be refused."""
    try:
        with zipfile.ZipFile(archive) as bundle:
            infos = bundle.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, NotImplementedError) as error:
        raise UsageError(f"{archive} cannot be read as a zip ({error}); download it again") from error
    except UnicodeDecodeError as error:  # names flagged UTF-8 that are not
        raise UsageError(f"{archive}: an entry's name is marked UTF-8 but is not ({error.reason}); "
                         "re-create the zip") from error
    if len(infos) > MAX_ENTRIES:
        raise UsageError(f"{archive} holds {len(infos):,} entries; at most {MAX_ENTRIES:,} are accepted, "
                         "so the zip was not unpacked")
    entries = []
    for info in infos:
        name = entry_name(info).replace("\\", "/")
        parts = tuple(part for part in name.split("/") if part not in ("", "."))
        if name.startswith("/") or _DRIVE.match(name) or ".." in parts:
            raise UsageError(f"{archive}: the entry {shown(name)!r} would be written outside the output folder; "
                             "the zip was not unpacked")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise UsageError(f"{archive}: the entry {shown(name)!r} is a symbolic link; the zip was not unpacked "
                             "(zip the files themselves)")
        if parts:
            entries.append(ZipEntry(name, parts, info.is_dir() or name.endswith("/"), info.file_size,
                                    info.compress_size, info))
    return entries


def entry_name(info: zipfile.ZipInfo) -> str:
    """The entry's name, decoded as described in the module docstring."""
    if info.flag_bits & _UTF8_FLAG:
        return info.filename  # zipfile decoded it as UTF-8
    # zipfile decoded the raw bytes as CP437, which maps every byte: encoding gives them back.
    raw = info.orig_filename.encode("cp437")
    unicode_path = _unicode_path(info.extra, raw)
    if unicode_path is not None:
        return unicode_path
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp437")


def _unicode_path(extra: bytes, raw_name: bytes) -> str | None:
    """The UTF-8 name of an Info-ZIP Unicode Path field (version 1) made for exactly ``raw_name``."""
    offset = 0
    while offset + 4 <= len(extra):
        field, size = struct.unpack_from("<HH", extra, offset)
        data = extra[offset + 4:offset + 4 + size]
        offset += 4 + size
        if field == _UNICODE_PATH and len(data) >= 5 and data[0] == 1:
            (crc,) = struct.unpack_from("<I", data, 1)
            if crc == zlib.crc32(raw_name):  # a stale field (the name was changed after) is ignored
                try:
                    return data[5:].decode("utf-8")
                except UnicodeDecodeError:
                    return None
    return None


def unpack(archive: Path, entries: Iterable[ZipEntry], target: Path) -> dict[str, str]:
    """Write ``entries`` of ``archive`` under ``target`` (emptied first), each at its ``parts``.

    Returns the entries that could not be unpacked: ``{entry name: why}`` (the file is then absent).
    Raises UsageError, before writing anything, when together they exceed :data:`MAX_UNPACKED`.
    """
    entries = list(entries)
    total = sum(entry.size for entry in entries)
    if total > MAX_UNPACKED:
        raise UsageError(f"{archive}: the submissions to grade unpack to {total:,} bytes; at most {MAX_UNPACKED:,} "
                         "are accepted, so the zip was not unpacked")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    problems: dict[str, str] = {}
    with zipfile.ZipFile(archive) as bundle:
        for entry in entries:
            destination = target.joinpath(*entry.parts)
            problem = _unpack_one(bundle, entry, destination)
            if problem is not None:
                problems[entry.name] = problem
                destination.unlink(missing_ok=True)
    return problems


def _unpack_one(bundle: zipfile.ZipFile, entry: ZipEntry, destination: Path) -> str | None:
    name = shown(entry.parts[-1])
    if entry.info.flag_bits & _ENCRYPTED_FLAG:
        return f"{name} is encrypted in the zip; zip it again without a password"
    try:
        destination.parent.mkdir(parents=True, exist_ok=True)
        with bundle.open(entry.info) as source, open(destination, "wb") as sink:
            _copy_capped(source, sink, entry.size)
    except _LargerThanDeclared:
        return (f"{name} unpacks to more than the {entry.size:,} bytes its zip entry declares "
                "(a damaged or crafted zip); download the submissions again")
    except NotImplementedError:
        return f"{name} is compressed with a method Python cannot read; zip it again with the usual (deflate) method"
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        return f"{name} is damaged in the zip ({error}); download the submissions again"
    except OSError as error:
        return f"{name} could not be unpacked ({error.strerror}); shorten or rename it and rerun"
    with contextlib.suppress(OverflowError, ValueError, OSError):
        # The time the zip gives the file (local time, as unzip restores it): --deadline reads it.
        when = time.mktime((*entry.info.date_time, 0, 0, -1))
        os.utime(destination, (when, when))
    return None


class _LargerThanDeclared(Exception):
    pass


def _copy_capped(source: IO[bytes], sink: IO[bytes], limit: int) -> None:
    """Copy at most ``limit`` bytes: the sizes in a zip's directory can lie, and zipfile's own
    check comes only at the end of the stream."""
    left = limit
    while True:
        chunk = source.read(min(left + 1, 1 << 16))
        if not chunk:
            return
        if len(chunk) > left:
            raise _LargerThanDeclared()
        sink.write(chunk)
        left -= len(chunk)
