"""The wire between the grader and its sandbox: message framing and a strict JSON codec.

Both sides import this file: the sandbox child (a clean interpreter that must not import the
``grader`` package, so this module uses only the standard library, and numpy lazily) and the
trusted grader. The child *encodes* what a scenario program observed; the grader *decodes* it.

Security contract of :func:`decode` (the only function here the grader trusts with hostile
bytes): the input is any byte string; the output is built only from ``None``, ``bool``, ``int``,
``float`` (finite, or the explicit non-finite tag), ``str``, ``list``, ``dict`` with ``str`` keys,
float64/int64/bool ``numpy.ndarray`` copies, numpy scalars of those dtypes, and the two frozen
records :class:`Raised` and :class:`Opaque`. Nothing is ever evaluated or unpickled; anything
else, and anything too large or too deep, raises :class:`ProtocolError`.

A message on the wire is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import binascii
import functools
import json
import marshal
import math
import re
import struct
import sys
from dataclasses import dataclass, field

HEADER = struct.Struct(">I")
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 24
MAX_ITEMS = 200_000  # scalars in one message, array elements included
MAX_STR = 16_384  # characters kept of any one string the child sends
MAX_INT_BITS = 256

# Tags: a dict with exactly one of these keys stands for a value JSON cannot hold.
_NDARRAY, _NPSCALAR, _FLOAT, _RAISED, _OPAQUE = (
    "__ndarray__", "__npscalar__", "__float__", "__raised__", "__opaque__")
_TAGS = frozenset({_NDARRAY, _NPSCALAR, _FLOAT, _RAISED, _OPAQUE})
_DTYPES = {"float64", "int64", "bool"}  # what an observed array may hold, after normalisation
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


# Characters a terminal acts on instead of printing: C0 controls but tab and newline (ESC starts the
# sequences that clear the screen or move the cursor, CR rewrites a line), DEL, C1, and the bidi
# overrides that reorder what is shown. Student text is shown with these escaped, so it cannot paint
# a fake score over the real one.
# (Compiled on first use: both processes import this module on their way to a scenario's start.)
@functools.lru_cache(maxsize=None)
def _unprintable() -> re.Pattern:
    return re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every terminal control character written as an escape (``\\x1b``, ``\\u202e``)."""
    return _unprintable().sub(lambda match: repr(match.group())[1:-1], text)


class ProtocolError(ValueError):
    """The bytes from the sandbox are not a well-formed, bounded message."""


@dataclass(frozen=True)
class Raised:
    """A record of an exception raised by student code (never the exception object itself)."""

    type: str
    message: str
    mro: tuple[str, ...] = ()
    traceback: str = ""

    def is_a(self, type_name: str) -> bool:
        """True when the exception was an instance of a class named ``type_name``."""
        return type_name == self.type or type_name in self.mro

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclass(frozen=True)
class Opaque:
    """A value the program returned that plain data cannot hold (a Tensor, a subclass, ...)."""

    type: str
    repr: str = field(default="")

    def __str__(self) -> str:
        return f"<{self.type}> {self.repr}".rstrip()


# --------------------------------------------------------------------------- framing

# One encoder for every message: json.dumps with these options would build one per call, and in a
# scenario process every object touched on the way out costs a copied page (see encode()).
_COMPACT_JSON = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def frame(message: dict) -> bytes:
    """Serialise one message: strict JSON (no NaN) behind a length header."""
    body = _COMPACT_JSON.encode(message).encode("utf-8")
    return HEADER.pack(len(body)) + body


def pack_code(code) -> str:
    """A code object as text for a message from the grader to the sandbox (never the other way).

    marshal, like pickle, must only ever load trusted bytes: the sandbox loads what the grader
    compiled (the same interpreter, so the same format), and the grader never loads code at all."""
    return binascii.b2a_base64(marshal.dumps(code), newline=False).decode("ascii")


def unpack_code(text: str):
    """The code object :func:`pack_code` packed. In the sandbox only."""
    return marshal.loads(binascii.a2b_base64(text))


class FrameReader:
    """Cuts a byte stream into message bodies; never holds more than one bounded message.

    ``feed`` returns the complete bodies found so far. A declared length above
    ``max_bytes`` is reported once as a :class:`ProtocolError` and its bytes are skipped,
    so one oversize message does not corrupt the framing of the ones after it.
    """

    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES):
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._skip = 0

    def feed(self, data: bytes) -> list[bytes | ProtocolError]:
        out: list[bytes | ProtocolError] = []
        if self._skip:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        self._buffer += data
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > self.max_bytes:
                out.append(ProtocolError(f"a message of {length:,} bytes (the limit is {self.max_bytes:,})"))
                available = len(self._buffer) - HEADER.size
                self._skip = max(0, length - available)
                del self._buffer[: HEADER.size + min(length, available)]
                continue
            if len(self._buffer) < HEADER.size + length:
                break
            out.append(bytes(self._buffer[HEADER.size: HEADER.size + length]))
            del self._buffer[: HEADER.size + length]
        return out

    @property
    def pending(self) -> int:
        """Bytes of an incomplete message still buffered (a truncated message at EOF)."""
        return len(self._buffer) + self._skip


# --------------------------------------------------------------------------- child side

def encode(value, depth: int = 0):
    """Turn an observation into JSON-ready plain data (runs in the sandbox child).

    Exact types only: a subclass of float, list, dict or ndarray could lie about its value
    through overridden methods, so it is sent as :class:`Opaque`, described without calling
    any method it overrides. The grader re-checks everything in :func:`decode` anyway.

    Kept narrow on purpose: it runs in a fresh fork, where the first write to each page of the
    zygote's memory (a reference count will do) copies that page. Reading numpy's ``dtype.name``
    (which runs Python) and importing ``sys`` per call took ~30 of a scenario's ~450 page faults.
    """
    if depth > MAX_DEPTH:
        return {_OPAQUE: {"type": "too deeply nested", "repr": ""}}
    kind = type(value)
    if value is None or kind is bool or kind is str and len(value) <= MAX_STR:
        return value
    if kind is str:
        return value[:MAX_STR] + f"... [{len(value) - MAX_STR:,} more characters]"
    if kind is int:
        return value if value.bit_length() <= MAX_INT_BITS else _opaque(value, "int (too large)")
    if kind is float:
        return value if math.isfinite(value) else {_FLOAT: repr(value)}
    if kind in (list, tuple):
        return [encode(item, depth + 1) for item in value]
    if kind is dict:
        if all(type(k) is str and k not in _TAGS for k in value):
            return {k: encode(v, depth + 1) for k, v in value.items()}
        return _opaque(value, "dict with non-string keys")
    if isinstance(value, BaseException):
        return raised_record(value)
    numpy = _numpy_if_loaded()
    if numpy is not None:
        if kind is numpy.ndarray:
            return _encode_array(value, numpy)
        if isinstance(value, numpy.generic) and kind.__module__ == "numpy":
            return {_NPSCALAR: {"dtype": value.dtype.name, "value": encode(value.item(), depth + 1)}}
    return _opaque(value)


def raised_record(error: BaseException, traceback_text: str = "") -> dict:
    """Describe an exception as tagged plain data (decoded as :class:`Raised`).

    ``str(error)`` may run student code (a hostile ``__str__``); it is guarded and capped.
    """
    try:
        message = str(error)
    except BaseException as inner:  # a hostile __str__; describe that instead
        message = f"<str() of this exception raised {type(inner).__name__}>"
    mro = [cls.__name__ for cls in type(error).__mro__]
    return {_RAISED: {"type": type(error).__name__, "message": encode(message), "mro": mro[:32],
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
        flat = [x if math.isfinite(x) else {_FLOAT: repr(x)} for x in flat]
    return {_NDARRAY: {"dtype": dtype, "shape": list(array.shape), "data": flat}}


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
    return {_OPAQUE: {"type": name[:200], "repr": text[:500]}}


def _numpy_if_loaded():
    return sys.modules.get("numpy")


# --------------------------------------------------------------------------- grader side

@dataclass(frozen=True)
class Numeric:
    """A validated numpy value not yet built (``decode(..., numpy_now=False)``): see :func:`materialize`."""

    dtype: str
    shape: tuple[int, ...] | None  # None: a numpy scalar
    values: tuple

    def build(self):
        import numpy
        if self.shape is None:
            return numpy.dtype(self.dtype).type(self.values[0])
        return numpy.array(self.values, dtype=self.dtype).reshape(self.shape)


def materialize(value):
    """Turn every :class:`Numeric` inside ``value`` into its numpy array or scalar."""
    if isinstance(value, Numeric):
        return value.build()
    if isinstance(value, list):
        return [materialize(item) for item in value]
    if isinstance(value, dict):
        return {key: materialize(item) for key, item in value.items()}
    return value


def decode(body: bytes, max_bytes: int = MAX_MESSAGE_BYTES, numpy_now: bool = True):
    """Parse one message body from the sandbox. Raises :class:`ProtocolError` on anything off.

    With ``numpy_now=False`` arrays and numpy scalars stay :class:`Numeric` records (validated,
    not built), so a grader still importing numpy in another thread is not waited for."""
    if len(body) > max_bytes:
        raise ProtocolError(f"a message of {len(body):,} bytes (the limit is {max_bytes:,})")
    try:
        raw = _STRICT_JSON.decode(body.decode("utf-8"))
    except ProtocolError:
        raise
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ProtocolError(f"not valid JSON ({error})") from None
    except (RecursionError, MemoryError, ValueError):
        raise ProtocolError("the message is nested too deeply or holds a number too large") from None
    decoded = _Decoder().value(raw, 0)
    return materialize(decoded) if numpy_now else decoded


def decode_inputs(raw):
    """A scenario's inputs as the sandbox gets them: :func:`encode`'s output, already parsed from
    the grader's (trusted) command, with its arrays rebuilt. Checked as :func:`decode` checks."""
    return materialize(_Decoder().value(raw, 0))


def _reject_constant(name: str):
    raise ProtocolError(f"{name} is not JSON; non-finite numbers must be tagged")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ProtocolError(f"the number {text[:40]} overflows a float")
    return number


# One decoder for every message (json.loads with these hooks would build one per call).
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float)


class _Decoder:
    """Rebuilds values from parsed JSON, counting items and depth so limits hold."""

    def __init__(self):
        self.items = 0

    def _count(self, n: int = 1) -> None:
        self.items += n
        if self.items > MAX_ITEMS:
            raise ProtocolError(f"the message holds more than {MAX_ITEMS:,} values")

    def value(self, raw, depth: int):
        if depth > MAX_DEPTH + 2:  # +2: the envelope around the observations
            raise ProtocolError(f"the message is nested deeper than {MAX_DEPTH} levels")
        self._count()
        if raw is None or isinstance(raw, (bool, str, float)):
            return raw
        if isinstance(raw, int):
            if raw.bit_length() > MAX_INT_BITS:
                raise ProtocolError("an integer is too large")
            return raw
        if isinstance(raw, list):
            return [self.value(item, depth + 1) for item in raw]
        if len(raw) == 1 and next(iter(raw)) in _TAGS:
            ((tag, body),) = raw.items()
            return self._tagged(tag, body, depth)
        return {key: self.value(item, depth + 1) for key, item in raw.items()}

    def _tagged(self, tag: str, body, depth: int):
        if tag == _FLOAT:
            if body not in _NONFINITE:
                raise ProtocolError(f"bad non-finite float tag {str(body)[:40]!r}")
            return _NONFINITE[body]
        if tag == _NDARRAY:
            return self._array(body)
        if tag == _NPSCALAR:
            scalar = _fields(body, dtype=str, value=object)
            if scalar["dtype"] not in _DTYPES and scalar["dtype"] not in ("float32", "int32"):
                raise ProtocolError(f"bad numpy scalar dtype {scalar['dtype'][:40]!r}")
            number = self.value(scalar["value"], depth + 1)
            if not isinstance(number, (bool, int, float)):
                raise ProtocolError("a numpy scalar must hold a number")
            return Numeric(scalar["dtype"], None, (number,))
        if tag == _RAISED:
            record = _fields(body, type=str, message=str, mro=list, traceback=str)
            if not all(isinstance(name, str) for name in record["mro"]) or len(record["mro"]) > 64:
                raise ProtocolError("bad exception record")
            return Raised(printable(record["type"][:200]), printable(record["message"]),
                          tuple(printable(n[:200]) for n in record["mro"]), printable(record["traceback"]))
        record = _fields(body, type=str, repr=str)
        return Opaque(printable(record["type"][:200]), printable(record["repr"][:2000]))

    def _array(self, body):
        spec = _fields(body, dtype=str, shape=list, data=list)
        shape, data = spec["shape"], spec["data"]
        if spec["dtype"] not in _DTYPES:
            raise ProtocolError(f"bad array dtype {spec['dtype'][:40]!r}")
        if len(shape) > 32 or not all(type(n) is int and 0 <= n for n in shape):
            raise ProtocolError("bad array shape")
        if math.prod(shape) != len(data):
            raise ProtocolError(f"an array of shape {tuple(shape)} cannot hold {len(data)} values")
        self._count(len(data))
        numbers = []
        for item in data:
            if isinstance(item, dict):
                item = self._tagged(*_single_tag(item), 0)
            if not isinstance(item, (int, float)):  # bool is an int
                raise ProtocolError("an array may only hold numbers")
            numbers.append(item)
        return Numeric(spec["dtype"], tuple(shape), tuple(numbers))


def _single_tag(item: dict):
    if len(item) != 1 or _FLOAT not in item:
        raise ProtocolError("an array may only hold numbers")
    return _FLOAT, item[_FLOAT]


def _fields(body, **types) -> dict:
    """Check that ``body`` is a dict with exactly these keys, each of the given type."""
    if not isinstance(body, dict) or set(body) != set(types):
        raise ProtocolError(f"expected fields {sorted(types)}")
    for name, kind in types.items():
        if kind is not object and not isinstance(body[name], kind):
            raise ProtocolError(f"field {name!r} must be {kind.__name__}")
    return body
