"""Build a wheel of the installed grader, offline, for the Gradescope package and the handout.

A wheel is a zip of the package files plus a ``.dist-info`` folder (PEP 427). Building it from
the installed package (rather than with pip from a source tree) works for editable and regular
installs alike, needs no network and takes milliseconds. Its ``METADATA`` and ``entry_points.txt``
are the installed distribution's own (:mod:`grader.distribution`): the dependencies and the extras
(``Provides-Extra``, the ``extra == "notebook"`` markers) exactly as ``pyproject.toml`` declares them.
"""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from email.parser import HeaderParser
from pathlib import Path

import grader.distribution as distribution

DIST = "autodiff_grader"


def build_wheel() -> tuple[str, bytes]:
    """(file name, bytes) of a py3-none-any wheel of the ``grader`` package as installed."""
    metadata = distribution.metadata_text()
    version = HeaderParser().parsestr(metadata, headersonly=True)["Version"]
    package = Path(__file__).parent
    files: dict[str, bytes] = {}
    for path in sorted(package.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            files[f"grader/{path.relative_to(package).as_posix()}"] = path.read_bytes()
    info = f"{DIST}-{version}.dist-info"
    files[f"{info}/METADATA"] = metadata.encode()
    files[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: autodiff-grader\nRoot-Is-Purelib: true\n"
                              b"Tag: py3-none-any\n")
    files[f"{info}/entry_points.txt"] = distribution.entry_points_text().encode()
    record = [f"{name},sha256={_digest(data)},{len(data)}" for name, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return f"{DIST}-{version}-py3-none-any.whl", buffer.getvalue()


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
