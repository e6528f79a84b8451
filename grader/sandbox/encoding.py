"""Observations as plain data: how the sandbox child writes what a program returned.

The child *encodes* a scenario's observations (and the grader encodes a scenario's inputs the same
way); :mod:`grader.sandbox.decoding` is the grader's strict reader. Standard library only (numpy
lazily, when it is loaded): the child imports this file by path.

A dict with exactly one of the tag keys below stands for a value JSON cannot hold.
"""

from __future__ import annotations

import math
import sys

if __package__:  # imported by the grader, as grader.sandbox.encoding
    from grader.sandbox.framing import ProtocolError
else:  # the sandbox child imports its sibling modules by path, as top-level modules
    from framing import ProtocolError  # type: ignore[no-redef]

MAX_DEPTH = 24
MAX_ITEMS = 200_000  # scalars in one message, array elements included
MAX_STR = 16_384  # characters kept of any one string the child sends
MAX_INT_BITS = 256

NDARRAY, NPSCALAR, FLOAT, RAISED, OPAQUE = "__ndarray__", "__npscalar__", "__float__", "__raised__", "__opaque__"
TAGS = frozenset({NDARRAY, NPSCALAR, FLOAT, RAISED, OPAQUE})
NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def encode(value, depth: int = 0):
    """Turn an observation into JSON-ready plain data (runs in the sandbox child).

    Exact types only: a subclass of float, list, dict or ndarray could lie about its value
    through overridden methods, so it is sent as an opaque record, described without calling
    any method it overrides. The grader re-checks everything when it decodes anyway.

    Kept narrow on purpose: it runs in a fresh fork, where the first write to each page of the
    zygote's memory (a reference count will do) copies that page; numpy's ``dtype.name`` runs
    Python, so an array's dtype is told by its C attributes (benchmarks/README.md).
    """
    if depth > MAX_DEPTH:
        return {OPAQUE: {"type": "too deeply nested", "repr": ""}}
    kind = type(value)
    if value is None or kind is bool or kind is str and len(value) <= MAX_STR:
        return value
    if kind is str:
        return value[:MAX_STR] + f"... [{len(value) - MAX_STR:,} more characters]"
    if kind is int:
        return value if value.bit_length() <= MAX_INT_BITS else _opaque(value, "int (too large)")
    if kind is float:
        return value if math.isfinite(value) else {FLOAT: repr(value)}
    if kind in (list, tuple):
        return [encode(item, depth + 1) for item in value]
    if kind is dict:
        if all(type(k) is str and k not in TAGS for k in value):
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return _opaque(value, "dict with non-string keys")
    if isinstance(value, BaseException):
        return raised_record(value)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        if kind is numpy.ndarray:
            return _encode_array(value, numpy)
        if isinstance(value, numpy.generic) and kind.__module__ == "numpy":
            return {NPSCALAR: {"dtype": value.dtype.name, "value": encode(value.item(), depth + 1)}}
    return _opaque(value)


def raised_record(error: BaseException, traceback_text: str = "") -> dict:
    """Describe an exception as tagged plain data (decoded as :class:`grader.values.Raised`).

    ``str(error)`` may run student code (a hostile ``__str__``); it is guarded and capped.
    """
    try:
        message = str(error)
    except BaseException as inner:  # a hostile __str__; describe that instead
        message = f"<str() of this exception raised {type(inner).__name__}>"
    mro = [cls.__name__ for cls in type(error).__mro__]
    return {RAISED: {"type": type(error).__name__, "message": encode(message), "mro": mro[:32],
                     "traceback": encode(traceback_text)}}


def _encode_array(array, numpy):
    if array.size > MAX_ITEMS:
        return _opaque(array, f"ndarray of shape {array.shape} (too large to send)")
    kind, size = array.dtype.kind, array.dtype.itemsize  # C attributes (dtype.name runs Python)
    dtype = ("float64" if (kind, size) == ("f", 8) else "int64" if (kind, size) == ("i", 8)
             else "bool" if kind == "b" else None)
    if dtype is None:
        return _opaque(array, f"ndarray of dtype {array.dtype}")
    flat = array.ravel().tolist()
    if kind == "f":
        flat = [x if math.isfinite(x) else {FLOAT: repr(x)} for x in flat]
    return {NDARRAY: {"dtype": dtype, "shape": list(array.shape), "data": flat}}


def _opaque(value, description: str | None = None) -> dict:
    kind = type(value)
    name = kind.__name__ if kind.__module__ in ("builtins", "numpy") else f"{kind.__module__}.{kind.__qualname__}"
    text = description or ""
    if description is None:
        for base in (float, int, str, list, tuple, dict):  # base-class repr: no overridden method runs
            if isinstance(value, base):
                try:
                    text = f"a subclass of {base.__name__}: {base.__repr__(value)}"
                except Exception:
                    text = f"a subclass of {base.__name__}"
                break
        else:
            text = object.__repr__(value)
    return {OPAQUE: {"type": name[:200], "repr": text[:500]}}


def decode_inputs(raw):
    """A scenario's inputs as the sandbox gets them: :func:`encode`'s output, already parsed from
    the grader's (trusted) command, with its arrays, numpy scalars and non-finite floats rebuilt.
    Inputs hold numbers, text, lists and dicts only: anything else raises :class:`ProtocolError`."""
    if isinstance(raw, list):
        return [decode_inputs(item) for item in raw]
    if not isinstance(raw, dict):
        return raw
    if len(raw) == 1 and next(iter(raw)) in TAGS:
        ((tag, body),) = raw.items()
        try:
            return _rebuilt(tag, body)
        except (KeyError, TypeError, ValueError) as error:
            raise ProtocolError(f"a malformed {tag} input ({error})") from None
    return {key: decode_inputs(item) for key, item in raw.items()}


_INPUT_DTYPES = {"float64", "int64", "bool"}


def _rebuilt(tag: str, body):
    if tag == FLOAT:
        return NONFINITE[body]
    numpy = sys.modules.get("numpy") or __import__("numpy")
    if tag == NDARRAY and body["dtype"] in _INPUT_DTYPES:
        data = [NONFINITE[item[FLOAT]] if isinstance(item, dict) else item for item in body["data"]]
        return numpy.array(data, dtype=body["dtype"]).reshape(body["shape"])
    if tag == NPSCALAR and body["dtype"] in _INPUT_DTYPES | {"float32", "int32"}:
        return numpy.dtype(body["dtype"]).type(decode_inputs(body["value"]))
    raise ValueError(f"{tag} of {str(body)[:60]}")
