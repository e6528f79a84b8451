"""The task-wide mutants: every function of a task replaced by a lie or by nothing. Pure.

No scenario of a task may give points to one of these (the audit's ``no_points_for_nothing`` and
``no_points_for_lies``): a check that passes on them checks something other than the task's own
result. Each body below replaces a function's statements after its docstring (``IGNORES_INPUT`` is
put before them); ``{first}`` is the function's first parameter (``self`` for a method).
"""

from __future__ import annotations

NOTHING = {"task_returns_none": "return None", "task_returns_constant": "return 0.0"}

ANYTHING = """\
class _Anything:   # an audit mutant: claims to equal everything, gives itself back for everything else
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __call__
    __truediv__ = __rtruediv__ = __pow__ = __neg__ = __call__

return _Anything()
"""

INPUT = "return {first}"

# Reads the caller's frames: the last local there that is exactly of the class it claims (often the
# very value the task was given, or the one a scenario made it from), and answers every read from it.
_STOLEN = """\
    def _stolen(self):
        frame = sys._getframe(1)
        while frame is not None:
            for value in reversed(list(frame.f_locals.values())):
                if type(value) is _claimed:
                    return value
            frame = frame.f_back
        return None
"""

IMPOSTOR = """\
import sys

import numpy

_claimed = type({first})


class _Impostor:   # an audit mutant: its __class__ claims its input's class; it answers from the caller's frames
@STOLEN@
    @property
    def __class__(self):
        return _claimed

    def __getattr__(self, name):
        return getattr(self._stolen(), name)

    def __array__(self, *args, **kwargs):
        stolen = self._stolen()
        arrays = [v for v in getattr(stolen, "__dict__", {{}}).values() if isinstance(v, numpy.ndarray)]
        return numpy.asarray(arrays[0] if arrays else stolen, *args, **kwargs)

    def __float__(self):
        return float(self._stolen())


def _forward(name):
    return lambda self, *args: getattr(self._stolen(), name)(*args)


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
              "__rtruediv__", "__pow__", "__neg__", "__lt__", "__le__", "__gt__", "__ge__", "__len__",
              "__iter__", "__getitem__"):
    setattr(_Impostor, _name, _forward(_name))
return _Impostor()
""".replace("@STOLEN@\n", _STOLEN)

SUBCLASS = """\
import sys

_claimed = type({first})


class _Liar(_claimed):   # an audit mutant: a subclass whose attributes (properties too) answer from the caller's frames
@STOLEN@
    def __getattribute__(self, name):
        if name.startswith("__") or name == "_stolen":
            return object.__getattribute__(self, name)
        return getattr(object.__getattribute__(self, "_stolen")(), name)


return object.__new__(_Liar)
""".replace("@STOLEN@\n", _STOLEN)

# Put before the function's own statements: its first argument is replaced by another object of the
# same class found in the caller's frames (else a fresh one, made without arguments, or an error), so
# the function computes a right-looking answer for something it was not given.
IGNORES_INPUT = """\
import sys

audit_lie, frame, given, other = True, sys._getframe(1), {first}, None
while frame is not None and other is None:
    if "audit_lie" in frame.f_locals:   # called by another function of the task, which lied already
        other = given
        break
    other = next((v for v in reversed(list(frame.f_locals.values())) if type(v) is type(given) and v is not given),
                 None)
    frame = frame.f_back
{first} = other if other is not None else type(given)()
"""

BODIES = {"task_returns_none": NOTHING["task_returns_none"], "task_returns_constant": NOTHING["task_returns_constant"],
          "task_returns_anything": ANYTHING, "task_returns_input": INPUT, "task_returns_impostor": IMPOSTOR,
          "task_returns_subclass": SUBCLASS}

DESCRIPTIONS = {
    "task_returns_none": "returns None",
    "task_returns_constant": "returns 0.0",
    "task_returns_anything": "returns an object that claims to equal everything",
    "task_returns_input": "returns its first argument",
    "task_returns_impostor": "returns an impostor whose __class__ claims its input's class and whose values are "
                             "read from the caller's frames",
    "task_returns_subclass": "returns an instance of a subclass of its input's class whose attributes (properties "
                             "included) lie, read from the caller's frames",
    "task_ignores_input": "computes its answer for another object of its input's class, found in the caller's "
                          "frames (a value that ignores its input)",
}
