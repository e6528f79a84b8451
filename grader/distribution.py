"""The grader's own distribution as pip installed it: the one source of what the grader depends on.

``pyproject.toml`` declares the dependencies and the extras; pip turns them into the installed
distribution's ``METADATA`` (``Requires-Dist``, ``Provides-Extra``, ``extra == "..."`` markers).
Everything that needs them reads them from there, through :mod:`importlib.metadata`: the wheel
:mod:`grader.wheel` builds for Gradescope and the handout, and the ``pip install`` commands the
grader prints when an extra is missing. No second list to drift from the first.
"""

from __future__ import annotations

import re
import shlex
import sys
from typing import TYPE_CHECKING

from grader.errors import UsageError
from grader.version import __version__

if TYPE_CHECKING:
    from importlib.metadata import Distribution

NAME = "autodiff-grader"
_EXTRA_MARKER = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")


def installed() -> Distribution:
    """The installed distribution of this very grader (its version is ``grader.__version__``).

    Looked for along ``sys.path`` as the import system does, but a source tree's ``*.egg-info`` (an
    editable install leaves one at the repository's root, which is ``sys.path[0]`` there and may be
    stale) is taken only when no installed ``*.dist-info`` of this version is found."""
    from importlib import metadata

    found = [d for d in metadata.distributions(name=NAME) if d.version == __version__]
    installed_ = [d for d in found if d.read_text("RECORD") is not None]
    if not (installed_ or found):
        raise UsageError(f"the grader ({NAME} {__version__}) is not installed as a package here, so "
                         "its metadata cannot be read: install it with pip (pip install . in its source folder)")
    return (installed_ or found)[0]


def metadata_text() -> str:
    """The installed distribution's ``METADATA``, as pip wrote it."""
    text = installed().read_text("METADATA")
    if not text:
        raise UsageError(f"the installed {NAME} has no METADATA file: reinstall it with pip")
    return text


def entry_points_text() -> str:
    """The installed distribution's ``entry_points.txt`` (the ``grader`` console script)."""
    return installed().read_text("entry_points.txt") or ""


def extra_requirements(extra: str) -> list[str]:
    """The requirements of an extra (``notebook`` -> ``['nbformat>=5.7', 'fastjsonschema>=2.16']``),
    from the installed metadata; [] when the grader is not installed as a package."""
    try:
        requires = installed().requires or []
    except UsageError:
        return []
    wanted = []
    for requirement in requires:
        spec, _, marker = requirement.partition(";")
        if extra in _EXTRA_MARKER.findall(marker):
            wanted.append(spec.strip())
    return wanted


def install_command(extra: str) -> str:
    """A command that installs ``extra``'s packages into the environment this grader runs in, as a
    user types it in a POSIX shell: its own interpreter's pip, the packages named with their
    versions. Not ``pip install 'autodiff-grader[x]'``: the grader comes from its wheel or its source
    folder, and a package index would not find it by that name."""
    packages = extra_requirements(extra)
    if not packages:
        return f"reinstall the grader with its {extra} extra (pip install '.[{extra}]' in its source folder)"
    return f"{shlex.quote(sys.executable)} -m pip install {' '.join(shlex.quote(p) for p in packages)}"
