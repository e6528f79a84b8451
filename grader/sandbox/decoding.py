"""The grader's strict reader of what the sandbox sends: bytes in, plain data and records out.

Security contract of :func:`decode` (the only function here the grader trusts with hostile
bytes): the input is any byte string; the output is built only from ``None``, ``bool``, ``int``,
``float`` (finite, or the explicit non-finite tag), ``str``, ``list``, ``dict`` with ``str`` keys,
and the frozen records of :mod:`grader.values` (:class:`Numeric` for float64/int64/bool arrays and
numpy scalars, :class:`Raised`, :class:`Opaque`). Every string in it, keys included, is at most
``MAX_STR`` characters (longer ones are cut, with a note) and holds no lone surrogate (replaced),
so any writer can write it. Nothing is ever evaluated or unpickled; anything else, and anything
too large or too deep, raises :class:`ProtocolError`.
"""

from __future__ import annotations

import json
import math

from grader.sandbox.encoding import (
    FLOAT,
    MAX_DEPTH,
    MAX_INT_BITS,
    MAX_ITEMS,
    MAX_STR,
    NDARRAY,
    NONFINITE,
    NPSCALAR,
    RAISED,
    TAGS,
)
from grader.sandbox.framing import MAX_MESSAGE_BYTES, ProtocolError
from grader.sandbox.safe_text import printable, storable
from grader.values import Numeric, Opaque, Raised, materialize

_DTYPES = {"float64", "int64", "bool"}  # what an observed array may hold, after normalisation


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
        if isinstance(raw, str):
            return storable(raw, MAX_STR)
        if raw is None or isinstance(raw, (bool, float)):
            return raw
        if isinstance(raw, int):
            if raw.bit_length() > MAX_INT_BITS:
                raise ProtocolError("an integer is too large")
            return raw
        if isinstance(raw, list):
            return [self.value(item, depth + 1) for item in raw]
        if len(raw) == 1 and next(iter(raw)) in TAGS:
            ((tag, body),) = raw.items()
            return self._tagged(tag, body, depth)
        return {storable(key, MAX_STR): self.value(item, depth + 1) for key, item in raw.items()}

    def _tagged(self, tag: str, body, depth: int):
        if tag == FLOAT:
            if body not in NONFINITE:
                raise ProtocolError(f"bad non-finite float tag {str(body)[:40]!r}")
            return NONFINITE[body]
        if tag == NDARRAY:
            return self._array(body)
        if tag == NPSCALAR:
            scalar = _fields(body, dtype=str, value=object)
            if scalar["dtype"] not in _DTYPES and scalar["dtype"] not in ("float32", "int32"):
                raise ProtocolError(f"bad numpy scalar dtype {scalar['dtype'][:40]!r}")
            number = self.value(scalar["value"], depth + 1)
            if not isinstance(number, (bool, int, float)):
                raise ProtocolError("a numpy scalar must hold a number")
            return Numeric(scalar["dtype"], None, (number,))
        if tag == RAISED:
            record = _fields(body, type=str, message=str, mro=list, traceback=str)
            if not all(isinstance(name, str) for name in record["mro"]) or len(record["mro"]) > 64:
                raise ProtocolError("bad exception record")
            return Raised(_name(record["type"]), _text(record["message"], MAX_STR),
                          tuple(_name(name) for name in record["mro"]), _text(record["traceback"], MAX_STR))
        record = _fields(body, type=str, repr=str)
        return Opaque(_name(record["type"]), _text(record["repr"], 2000))

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
                tag, body = _single_tag(item)
                item = self._tagged(tag, body, 0)
            if not isinstance(item, (int, float)):  # bool is an int
                raise ProtocolError("an array may only hold numbers")
            numbers.append(item)
        return Numeric(spec["dtype"], tuple(shape), tuple(numbers))


def _text(text: str, limit: int) -> str:
    return printable(storable(text, limit))


def _name(text: str) -> str:
    """A type's name: cut at 200 characters, without a note (it is compared, not read)."""
    return printable(storable(text[:200], 200))


def _single_tag(item: dict) -> tuple[str, object]:
    if len(item) != 1 or FLOAT not in item:
        raise ProtocolError("an array may only hold numbers")
    return FLOAT, item[FLOAT]


def _fields(body, **types) -> dict:
    """Check that ``body`` is a dict with exactly these keys, each of the given type."""
    if not isinstance(body, dict) or set(body) != set(types):
        raise ProtocolError(f"expected fields {sorted(types)}")
    for name, kind in types.items():
        if kind is not object and not isinstance(body[name], kind):
            raise ProtocolError(f"field {name!r} must be {kind.__name__}")
    return body
