"""The scenario API: a program that runs in the sandbox and a check that runs in the grader.

A scenario file is ordinary Python, trusted (instructors write it)::

    import numpy as np
    from grader.scenario import scenario, attempt
    from grader.expect import expect_close

    @scenario
    def detach_blocks_gradient(ad):
        x = ad.Tensor(np.arange(4.0), requires_grad=True)
        u = (x * x).detach()
        (u * x).sum().backward()
        return {"x_grad": x.grad}

    @detach_blocks_gradient.check
    def _(got):
        x = np.arange(4.0)
        expect_close(got["x_grad"], x * x, what="x.grad",
                     wrong={"gradient flowed through the detached value": 3 * x * x})

Only the *program's source text* crosses into the sandbox, where it is compiled on its own. So a
program may use its arguments (the student's module, then the inputs), ``np``, :func:`attempt`
and builtins, and nothing else from the file; the spec enforces that from the file's index
(:mod:`grader.spec`), and :mod:`grader.loading` imports the file. The check, the expected values
and everything else in the file stay in the grader.

Inputs: ``@scenario(inputs=make)`` calls ``make(rng)`` in the grader with a
``numpy.random.Generator`` seeded from the run's seed and the scenario id; the dict it returns
is sent to the program and given to the check, both as keyword arguments.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def attempt(action: Callable[[], Any]):
    """Run ``action()`` and return its value, or a record of the exception it raised.

    Use it in a program to observe an error instead of failing on it::

        second = attempt(lambda: tape.gradient(y, x))

    In the grader the record arrives as :class:`grader.values.Raised`. Only ``Exception``
    subclasses are caught: ``SystemExit`` and friends end the scenario as they should.
    (The sandbox child defines its own identical helper; this one serves authoring and tests.)
    """
    try:
        return action()
    except Exception as error:
        return error


def plain(value):
    """The plain data of what a program observed: a tensor's values (the ``data`` array of any
    object that has one), each item of an exact list or tuple, anything else as it is. Never
    raises, so a program can return ``plain(tape.gradient(y, x))`` whatever the student's code
    gave back, and the check describes a wrong value instead of the scenario failing on it.
    (The sandbox child defines its own identical helper; this one serves authoring and tests.)"""
    try:
        kind = type(value)
        if kind is list or kind is tuple:
            return kind(plain(item) for item in value)
        import numpy as np  # here: the plan phase imports this module, and needs no numpy
        if kind is not np.ndarray:
            data = getattr(value, "data", None)
            if type(data) is np.ndarray:
                return data
    except Exception:
        pass
    return value


@dataclass
class Scenario:
    """One scenario as a scenario file defines it: its program, its check and how its inputs are
    made (the spec gives it points and a task; the plan holds its program's source)."""

    id: str
    program: Callable[..., Any]
    make_inputs: Callable[[Any], dict] | None = None
    check_fn: Callable[..., None] | None = field(default=None, repr=False)

    def check(self, function: Callable[..., None]) -> Callable[..., None]:
        """Decorator: register the grader-side check ``function(got, **inputs)``."""
        self.check_fn = function
        return function

    def inputs(self, seed: int) -> dict:
        """The inputs for this scenario under ``seed``: the same seed gives the same inputs."""
        if self.make_inputs is None:
            return {}
        import numpy as np
        rng = np.random.default_rng([seed, zlib.crc32(self.id.encode())])
        made = self.make_inputs(rng)
        if not isinstance(made, dict):
            raise TypeError(f"the inputs of scenario {self.id!r} must be a dict, got {type(made).__name__}")
        return made


def scenario(function: Callable | None = None, *, inputs: Callable[[Any], dict] | None = None):
    """Decorator that turns a program function into a :class:`Scenario` (see the module doc)."""

    def wrap(program: Callable) -> Scenario:
        return Scenario(id=program.__name__, program=program, make_inputs=inputs)

    return wrap(function) if function is not None else wrap
