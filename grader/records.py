"""Records: the grader's frozen data classes, declared with ``@record`` where a frozen dataclass would be.

A record is a frozen dataclass: ``dataclasses.fields``, ``replace`` and ``asdict`` work on it,
``field(...)`` declares its fields, and its ``__init__`` is the one ``@dataclass(frozen=True)``
would write. What differs is the cost of declaring one. For each frozen class, Python 3.11's
dataclasses compile six small functions (``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__``, ``__delattr__``), and ``grader check`` declares dozens of classes before it has
a result to show: compiling them was a large part of its start-up (benchmarks/README.md). A record
compiles only its ``__init__``; the other five are shared by every record and read the class's
fields from what ``dataclass`` recorded:

* equality compares the fields with ``compare=True`` as a tuple, with an instance of the very
  same class only (as a dataclass does); the hash is that tuple's (``hash=`` honoured);
* ``repr`` shows the fields with ``repr=True``, ``...`` for an instance already being shown;
* every attribute assignment or deletion raises ``FrozenInstanceError``; ``__post_init__`` and
  ``__init__`` set fields with ``object.__setattr__``, as in a frozen dataclass.

What a reader of ``__dataclass_params__`` sees is a plain dataclass's flags (``dataclass`` is
called with ``init``, ``repr`` and ``eq`` off and ``frozen`` off, since the record supplies those);
nothing in the grader reads them. A class's own ``__init__``, ``__eq__``, ``__hash__`` or
``__repr__`` is kept, as a dataclass keeps it; its own ``__setattr__`` or ``__delattr__`` is
refused, as a frozen dataclass refuses it. ``InitVar`` and ``ClassVar`` fields are not supported
(a TypeError at declaration).
"""

from __future__ import annotations

import _thread
import dataclasses
import operator
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T")

_HAS_DEFAULT_FACTORY = type("_HasDefaultFactory", (), {"__repr__": lambda self: "<factory>"})()


@overload
def record(cls: type[T], /) -> type[T]: ...
@overload
def record(*, slots: bool = False) -> Callable[[type[T]], type[T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, *, slots: bool = False) -> Any:
    """``@record`` or ``@record(slots=True)``: a frozen dataclass of ``cls`` (see the module)."""
    def wrap(cls: type[T]) -> type[T]:
        return _make(cls, slots)
    return wrap if cls is None else wrap(cls)


def _make(cls: type[T], slots: bool) -> type[T]:
    for name in ("__setattr__", "__delattr__"):
        if name in cls.__dict__:  # as @dataclass(frozen=True) refuses
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    # What the class writes itself it keeps, as with a dataclass (a class body that defines
    # __eq__ alone gets __hash__ = None from Python, which is not a hash of its own).
    written_hash = cls.__dict__.get("__hash__", dataclasses.MISSING)
    hashed = written_hash is dataclasses.MISSING or (written_hash is None and "__eq__" in cls.__dict__)
    own = {name for name in ("__init__", "__repr__", "__eq__") if name in cls.__dict__}
    made: Any = dataclasses.dataclass(cls, init=False, repr=False, eq=False, slots=slots)
    every = list(made.__dataclass_fields__.values())
    fields = dataclasses.fields(made)
    if len(every) != len(fields):
        others = sorted({f.name for f in every} - {f.name for f in fields})
        raise TypeError(f"record {cls.__qualname__}: InitVar and ClassVar fields are not supported "
                        f"({', '.join(others)})")
    if "__init__" not in own:
        made.__init__ = _init(made, fields)
    made._record_compared = staticmethod(_getter([f.name for f in fields if f.compare]))
    made._record_hashed = staticmethod(_getter([f.name for f in fields if (f.compare if f.hash is None else f.hash)]))
    made._record_shown = tuple(f.name for f in fields if f.repr)
    for name, shared in (("__eq__", _eq), ("__repr__", _repr)):
        if name not in own:
            setattr(made, name, shared)
    if hashed:
        made.__hash__ = _hash
    made.__setattr__, made.__delattr__ = _setattr, _delattr
    if slots:  # as a frozen dataclass with slots: pickling sets the fields past __setattr__
        made.__getstate__, made.__setstate__ = _getstate, _setstate
    return made


def _init(cls: Any, fields: tuple[dataclasses.Field, ...]) -> Callable[..., None]:
    """The ``__init__`` that ``@dataclass(frozen=True)`` writes, compiled once for ``cls``."""
    namespace: dict[str, Any] = {"__setattr": object.__setattr__, "__factory": _HAS_DEFAULT_FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for field in fields:
        default = f"__default_{field.name}"
        if field.default_factory is not dataclasses.MISSING:
            namespace[default] = field.default_factory
            value = f"{default}() if {field.name} is __factory else {field.name}" if field.init else f"{default}()"
            parameter = f"{field.name}=__factory"
        elif field.default is not dataclasses.MISSING:
            namespace[default] = field.default
            value, parameter = (field.name, f"{field.name}={default}") if field.init else (default, "")
            if not field.init and not cls.__dict__.get("__slots__"):
                continue  # read from the class attribute that holds the default, as a dataclass does
        elif field.init:
            value, parameter = field.name, field.name
        else:
            continue  # set by __post_init__, if at all, as in a dataclass
        if field.init:
            (keyword if field.kw_only else positional).append(parameter)
        body.append(f"  __setattr(self, {field.name!r}, {value})")
    if hasattr(cls, "__post_init__"):
        body.append("  self.__post_init__()")
    parameters = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    text = f"def __init__({parameters}):\n" + ("\n".join(body) or "  pass") + "\n"
    try:
        exec(compile(text, f"<record {cls.__qualname__}>", "exec"), namespace)
    except SyntaxError as error:  # a field without a default after one with a default
        raise TypeError(f"record {cls.__qualname__}: {error.msg}") from None
    made = namespace["__init__"]
    made.__annotations__ = {**{field.name: field.type for field in fields if field.init}, "return": None}
    made.__qualname__ = f"{cls.__qualname__}.__init__"
    made.__module__ = cls.__module__
    return made


def _getter(names: list[str]) -> Callable[[Any], tuple]:
    """The tuple of the named attributes (one-tuples too: tuples compare items by identity first)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        single = operator.attrgetter(names[0])
        return lambda value: (single(value),)
    return lambda value: ()


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return self._record_compared(self) == other._record_compared(other)
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self._record_hashed(self))


_SHOWING: set[tuple[int, int]] = set()


def _repr(self: Any) -> str:
    showing = (id(self), _thread.get_ident())
    if showing in _SHOWING:
        return "..."
    _SHOWING.add(showing)
    try:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._record_shown)
        return f"{self.__class__.__qualname__}({shown})"
    finally:
        _SHOWING.discard(showing)


def _setattr(self: Any, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list:
    return [getattr(self, field.name) for field in dataclasses.fields(self)]


def _setstate(self: Any, state: list) -> None:
    for field, value in zip(dataclasses.fields(self), state):
        object.__setattr__(self, field.name, value)
