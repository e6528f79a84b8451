"""A cache of parsed spec files, so that ``grader check`` need not import pyyaml at all (and of
scenario files' indexes, :mod:`grader.scenario_index`, so that it need not parse them either).

Importing pyyaml costs ~20 ms (it compiles its scanner's and resolver's patterns), on the path from
``grader check`` to the sandbox's first job, for a file that almost never changes. As Python keeps
bytecode beside a module, the grader keeps each spec it parsed: the YAML text itself and the
document it gave (the nested mappings and lists with their line numbers), as JSON in the user's
cache folder. A parse is taken from the cache only when the stored text is exactly the text being
parsed and pyyaml is the same install; anything else (no file, another text, a damaged file, an
unwritable folder) simply parses again. Only documents made of plain JSON values are kept.

The folder is ``$GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/autodiff-grader``, else
``~/.cache/autodiff-grader``. Deleting it is always safe.
"""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

from grader import atomic
from grader.spec_yaml import MarkedDict, MarkedList

FORMAT = 2


def load(text: str) -> MarkedDict | None:
    """The document parsed earlier from exactly ``text``, or None."""
    try:
        stored = recall("spec", text, _pyyaml_stamp())
        document = None if stored is None else _decode(stored)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return document if isinstance(document, MarkedDict) else None


def store(text: str, document: MarkedDict) -> None:
    """Remember ``document`` as the parse of ``text``; silently nothing when it cannot be kept."""
    try:
        remember("spec", text, _pyyaml_stamp(), _encode(document))
    except (OSError, TypeError):
        pass


def recall(kind: str, text: str, stamp: str):
    """The JSON value remembered as the ``kind`` of exactly ``text``, made by what ``stamp``
    names (the parser and its version); None when there is none."""
    try:
        stored = json.loads(_entry(text, kind).read_text(encoding="utf-8"))
        if stored["format"] != FORMAT or stored["stamp"] != stamp or stored["text"] != text:
            return None
        return stored["value"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember(kind: str, text: str, stamp: str, value) -> None:
    """Keep ``value`` (JSON) as the ``kind`` of ``text``; silently nothing when it cannot be kept."""
    try:
        entry = {"format": FORMAT, "stamp": stamp, "text": text, "value": value}
        atomic.write_text(_entry(text, kind), json.dumps(entry, allow_nan=False), durable=False)
    except (OSError, ValueError, TypeError):
        pass


def folder() -> Path:
    if os.environ.get("GRADER_CACHE_DIR"):
        return Path(os.environ["GRADER_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "autodiff-grader"


def _entry(text: str, kind: str) -> Path:
    data = text.encode("utf-8")
    return folder() / f"{kind}-{zlib.crc32(data):08x}-{len(data)}.json"  # a clash only costs a parse


def _pyyaml_stamp() -> str:
    """Which pyyaml would parse (found without importing it): its file and when it was installed."""
    import importlib.machinery
    spec = importlib.machinery.PathFinder.find_spec("yaml")
    if spec is None or spec.origin is None:
        raise OSError("pyyaml is not installed")
    return f"{spec.origin}:{os.stat(spec.origin).st_mtime_ns}"


def _encode(value):
    """Mappings and lists as tagged objects with their lines; scalars as they are (JSON's only)."""
    if isinstance(value, MarkedDict):
        return {"mapping": {key: _encode(item) for key, item in value.items()}, "line": value.line,
                "lines": value.lines}
    if isinstance(value, MarkedList):
        return {"list": [_encode(item) for item in value], "line": value.line, "lines": value.lines}
    if value is None or type(value) in (str, int, float, bool):
        return value
    raise TypeError(f"a {type(value).__name__} is not kept")  # a YAML date, say: parse it each time


def _decode(value):
    if isinstance(value, dict):
        if "mapping" in value:
            document = MarkedDict((key, _decode(item)) for key, item in value["mapping"].items())
            document.line, document.lines = value["line"], dict(value["lines"])
        else:
            document = MarkedList(_decode(item) for item in value["list"])
            document.line, document.lines = value["line"], list(value["lines"])
        return document
    return value
