"""Delete a job folder whatever a submission left in it: any depth, links, modes, names.

``shutil.rmtree`` recurses (3,000 nested folders raise RecursionError, which ``ignore_errors``
does not catch), builds paths longer than PATH_MAX, and gives up on a folder its owner made
unreadable. :func:`remove_tree` flattens instead: it works through the folders one at a time,
moving each subfolder it meets up to the top (a rename inside one filesystem, whatever the
depth), so it never holds more than two descriptors, never builds a long path and never recurses.
It follows no symbolic link (every folder is opened with O_NOFOLLOW relative to its parent's
descriptor), and gives back the owner's rights to a folder that took them away. It runs once the
submission's processes are gone; were one still alive, it could only keep some of its own files.
Standard library only: the sandbox child (the warden) imports this file by path too.
"""

from __future__ import annotations

import errno
import os
import stat

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_ROUNDS = 8  # listings of one folder: entries appearing meanwhile are a live process's doing
_NAME_TAKEN = {errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR}


def remove_tree(path: str | os.PathLike) -> bool:
    """Delete the folder ``path`` and all it holds; True when it is gone. Never raises."""
    path = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return True
        top = _open_folder(path, None)
    except FileNotFoundError:
        return True
    except Exception:
        return False
    try:
        _flatten_and_empty(top)
    except Exception:
        pass
    finally:
        os.close(top)
    try:
        os.rmdir(path)
        return True
    except FileNotFoundError:
        return True
    except Exception:
        return False


def _flatten_and_empty(top: int) -> None:
    pending: list[str | None] = [None]  # None: the top folder itself; else a name in it
    fresh = 0
    while pending:
        name = pending.pop()
        try:
            folder = top if name is None else _open_folder(name, top)
        except OSError:
            continue  # gone (moved twice), or not ours to open
        try:
            for _ in range(_MAX_ROUNDS):
                entries = os.listdir(folder)
                if not entries:
                    break
                for entry in entries:
                    fresh = _clear_entry(folder, entry, top, name is None, pending, fresh)
        finally:
            if folder != top:
                os.close(folder)
        if name is not None:
            try:
                os.rmdir(name, dir_fd=top)
            except OSError:
                pass


def _clear_entry(folder: int, entry: str, top: int, at_top: bool, pending: list, fresh: int) -> int:
    """Unlink a non-folder; queue a folder, moved up to the top first unless it is there already."""
    try:
        is_folder = stat.S_ISDIR(os.lstat(entry, dir_fd=folder).st_mode)
        if not is_folder:
            os.unlink(entry, dir_fd=folder)
        elif at_top:
            pending.append(entry)
        else:
            _restore_rights(entry, folder)  # moving a folder rewrites its "..": it must be writable
            for _ in range(64):  # a fresh name at the top; a name the submission chose may be taken
                fresh += 1
                target = f".grader-removing-{fresh}"
                try:
                    os.rename(entry, target, src_dir_fd=folder, dst_dir_fd=top)
                except OSError as error:
                    if error.errno in _NAME_TAKEN:
                        continue
                    raise
                pending.append(target)
                break
    except OSError:
        pass
    return fresh


def _open_folder(name: str, parent: int | None) -> int:
    """A descriptor of the folder ``name`` (in ``parent``), its owner's rights restored first."""
    _restore_rights(name, parent)
    return os.open(name, _DIRECTORY, dir_fd=parent)


def _restore_rights(name: str, parent: int | None) -> None:
    """Give the folder ``name`` back read, write and search rights for its owner, when that is us
    and it lacks any (root needs none). The folder is reached without any right (O_PATH, no
    link followed) and changed through its descriptor's magic link, which names this very folder."""
    if os.geteuid() == 0:
        return
    handle = os.open(name, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        mode = os.fstat(handle)
        if mode.st_mode & 0o700 != 0o700 and mode.st_uid == os.geteuid():
            os.chmod(f"/proc/self/fd/{handle}", 0o700)
    finally:
        os.close(handle)
