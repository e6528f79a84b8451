"""The values a scenario's observations can hold besides plain data: records the grader built.

What a program observed in the sandbox reaches the grader as strict JSON (see
:mod:`grader.sandbox.decoding`); anything plain JSON cannot say arrives as one of these frozen
records. A leaf module: checks, judging and scenario files import these names from here, never from
the process driver or the codec.
"""

from __future__ import annotations

from dataclasses import field

from grader.records import record


@record
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


@record
class Opaque:
    """A value the program returned that plain data cannot hold (a Tensor, a subclass, ...)."""

    type: str
    repr: str = field(default="")

    def __str__(self) -> str:
        return f"<{self.type}> {self.repr}".rstrip()


@record
class Numeric:
    """A validated numpy value not yet built: see :func:`materialize`. Decoding makes these so that
    a grader still importing numpy in another thread is not waited for."""

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
