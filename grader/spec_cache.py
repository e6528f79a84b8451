"""A cache of parsed spec files, scenario-file indexes and bytecode (the scenario files', the notebook
schema's validator), kept on disk by the loading edge.

Importing pyyaml and indexing a scenario file both lie on the path from ``grader check`` to the
sandbox's first job (benchmarks/README.md says how long), for files that almost never change. As
Python keeps bytecode beside a module, :mod:`grader.loading` keeps what it parsed: the exact text
and what it gave (for a spec, the nested mappings and lists with their line numbers), as JSON in
the user's cache folder. An entry answers only for exactly the text stored in it, made by the same
parser (the same pyyaml install, the same Python); anything else (no entry, another text, a damaged
or hostile entry, an unwritable folder) is a miss and costs a parse, never a failure.

Nothing here decides whether the cache may be trusted: :mod:`grader.checking` uses it only where
the sandbox cannot write the folder, and ``grade`` never does (docs/security.md).

The folder is ``$GRADER_CACHE_DIR``, else ``$XDG_CACHE_HOME/autodiff-grader``, else
``~/.cache/autodiff-grader``. Deleting it is always safe.
"""

from __future__ import annotations

import base64
import json
import marshal
import os
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

import grader.atomic as atomic
import grader.scenario_index as scenario_index
from grader.spec_yaml import MarkedDict, MarkedList

FORMAT = 3
MAX_ENTRY_BYTES = 4 * 1024 * 1024
_MAX_DEPTH = 64


class SpecCache:
    """Parsed specs and scenario indexes on disk, keyed by their exact text."""

    def __init__(self, folder: Path):
        self.folder = folder

    @classmethod
    def default(cls) -> SpecCache:
        if os.environ.get("GRADER_CACHE_DIR"):
            return cls(Path(os.environ["GRADER_CACHE_DIR"]))
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        return cls(Path(base) / "autodiff-grader")

    def parsed(self, text: str, parse: Callable[[str], MarkedDict]) -> MarkedDict:
        """The document ``parse(text)`` gives, from the cache when it holds exactly ``text``."""
        stamp = _pyyaml_stamp()
        if stamp is not None:
            document = self._recall("spec", text, stamp, _decode)
            if isinstance(document, MarkedDict):
                return document
        document = parse(text)  # a spec error propagates and is never stored
        if stamp is not None:
            try:
                self._remember("spec", text, stamp, _encode(document))
            except TypeError:  # a value JSON cannot hold (a YAML date, say): parsed each time
                pass
        return document

    def indexed(self, text: str) -> tuple[dict, ...]:
        """:func:`grader.scenario_index.functions` of ``text``, from the cache when it holds it."""
        stamp = f"{scenario_index.INDEX_VERSION}:{sys.version}"
        records = self._recall("scenarios", text, stamp, lambda value: value)
        if scenario_index.well_formed(records):
            return tuple(records)
        records = scenario_index.functions(text)
        self._remember("scenarios", text, stamp, list(records))
        return records

    def compiled(self, text: str, filename: str) -> CodeType:
        """``compile(text, filename, "exec")`` (a trusted file's code: a scenario file, say), from the
        cache when it holds the bytecode this Python made of exactly ``text`` under that name."""
        return self.code("code", text, f"{filename}:{sys.version}",
                         lambda: compile(text, filename, "exec", dont_inherit=True))

    def code(self, kind: str, text: str, stamp: str, make: Callable[[], CodeType]) -> CodeType:
        """The code object ``make()`` gives for ``text``, kept as marshalled bytecode: from the cache
        when it holds one for exactly ``text`` and ``stamp`` (which must name this Python, whose own
        format marshal writes). An error of ``make`` propagates and nothing is stored."""
        stored = self._recall(kind, text, stamp, lambda value: value)
        if isinstance(stored, str):
            try:
                code = marshal.loads(base64.b64decode(stored))
                if isinstance(code, CodeType):
                    return code
            except (ValueError, EOFError, TypeError):
                pass
        code = make()
        self._remember(kind, text, stamp, base64.b64encode(marshal.dumps(code)).decode("ascii"))
        return code

    def entry(self, kind: str, text: str) -> Path:
        data = text.encode("utf-8", "surrogatepass")
        return self.folder / f"{kind}-{zlib.crc32(data):08x}-{len(data)}.json"  # a clash only costs a parse

    def _recall(self, kind: str, text: str, stamp: str, decode: Callable[[Any], Any]):
        """The value stored for exactly ``text`` (decoded), or None. Any error reading is a miss:
        the folder may hold anything (a damaged file, a deeply nested hostile one)."""
        try:
            path = self.entry(kind, text)
            if path.stat().st_size > MAX_ENTRY_BYTES:
                return None
            stored = json.loads(path.read_text(encoding="utf-8"))
            if (not isinstance(stored, dict) or stored.get("format") != FORMAT or stored.get("stamp") != stamp
                    or stored.get("text") != text):
                return None
            return decode(stored["value"])
        except Exception:
            return None

    def _remember(self, kind: str, text: str, stamp: str, value) -> None:
        """Keep ``value`` (JSON) for ``text``; silently nothing when it cannot be kept."""
        try:
            entry = {"format": FORMAT, "stamp": stamp, "text": text, "value": value}
            # Not synced to disk: losing an entry only costs a parse.
            atomic.write_text(self.entry(kind, text), json.dumps(entry, allow_nan=False), durable=False)
        except (OSError, ValueError, TypeError):
            pass


def _pyyaml_stamp() -> str | None:
    """Which pyyaml would parse (found without importing it): its file and when it was installed."""
    import importlib.machinery
    spec = importlib.machinery.PathFinder.find_spec("yaml")
    if spec is None or spec.origin is None:
        return None
    try:
        return f"{spec.origin}:{os.stat(spec.origin).st_mtime_ns}"
    except OSError:
        return None


def _encode(value, depth: int = 0):
    """Mappings and lists as tagged objects with their lines; scalars as they are (JSON's only)."""
    if depth > _MAX_DEPTH:
        raise TypeError("too deeply nested to keep")
    if isinstance(value, MarkedDict):
        return {"mapping": {key: _encode(item, depth + 1) for key, item in value.items()}, "line": value.line,
                "lines": value.lines}
    if isinstance(value, MarkedList):
        return {"list": [_encode(item, depth + 1) for item in value], "line": value.line, "lines": value.lines}
    if value is None or type(value) in (str, int, float, bool):
        return value
    raise TypeError(f"a {type(value).__name__} is not kept")


def _decode(value, depth: int = 0):
    if depth > _MAX_DEPTH:
        raise ValueError("too deeply nested")
    if isinstance(value, dict):
        if "mapping" in value:
            mapping = MarkedDict((key, _decode(item, depth + 1)) for key, item in value["mapping"].items())
            mapping.line, mapping.lines = int(value["line"]), {str(k): int(v) for k, v in value["lines"].items()}
            return mapping
        sequence = MarkedList(_decode(item, depth + 1) for item in value["list"])
        sequence.line, sequence.lines = int(value["line"]), [int(v) for v in value["lines"]]
        return sequence
    if value is None or type(value) in (str, int, float, bool):
        return value
    raise ValueError(f"a {type(value).__name__} in a cache entry")
