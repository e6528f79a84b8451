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
and builtins, and nothing else from the file; :func:`load_scenarios` enforces that. The check,
the expected values and everything else in the file stay in the grader.

Inputs: ``@scenario(inputs=make)`` calls ``make(rng)`` in the grader with a
``numpy.random.Generator`` seeded from the run's seed and the scenario id; the dict it returns
is sent to the program and given to the check, both as keyword arguments.
"""

from __future__ import annotations

import builtins
import functools
import importlib.util
import inspect
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from grader import scenario_index
from grader.errors import SpecError

# Names a program may use besides its parameters and builtins; the sandbox provides them.
SANDBOX_GLOBALS = frozenset({"np", "attempt"})


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
    except Exception as error:  # noqa: BLE001 - the whole point is to observe it
        return error


@dataclass
class Scenario:
    """One scenario as defined in a scenario file (before the spec gives it points and a task)."""

    id: str
    program: Callable[..., Any]
    source: str  # the program's own source text, decorators removed: what the sandbox runs
    filename: str
    lineno: int
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
        source, lineno = _program_source(program)
        return Scenario(id=program.__name__, program=program, source=source,
                        filename=inspect.getsourcefile(program) or "?", lineno=lineno, make_inputs=inputs)

    return wrap(function) if function is not None else wrap


def _program_source(program: Callable) -> tuple[str, int]:
    """The function's source from its ``def`` line on (decorators dropped), dedented."""
    import textwrap  # here, like symtable below: grader check imports this module on its way to the sandbox
    filename = inspect.getsourcefile(program)
    lines, spans, _ = _scenario_file(filename)
    first, last = spans[program.__code__.co_firstlineno]
    return textwrap.dedent("".join(lines[first - 1: last])), first


@functools.lru_cache(maxsize=64)
def _scenario_file(filename: str) -> tuple[list[str], dict[int, tuple[int, int]], dict[int, dict]]:
    """A scenario file, indexed once per process (:mod:`grader.scenario_index`): its lines; for each
    function, (first line incl. decorators) and (def line) -> (def line, last line); and each
    function's record by its def line."""
    text = Path(filename).read_text(encoding="utf-8")
    spans, records = {}, {}
    for record in scenario_index.functions(text):
        spans[record["start"]] = spans[record["line"]] = (record["line"], record["end"])
        records[record["line"]] = record
    return text.splitlines(keepends=True), spans, records


def load_scenarios(path: Path) -> dict[str, Scenario]:
    """Import a scenario file (trusted) and return its scenarios by id, checked for sandbox use."""
    module_name = f"_grader_scenarios_{zlib.crc32(str(path).encode()):x}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise SpecError(str(path), None, "scenarios", "cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise SpecError(str(path), error.lineno, "scenarios", f"syntax error: {error.msg}") from None
    except Exception as error:
        raise SpecError(str(path), None, "scenarios", f"raised {type(error).__name__}: {error}") from None
    found = {value.id: value for value in vars(module).values() if isinstance(value, Scenario)}
    for item in found.values():
        _check_self_contained(item, path)
        if item.check_fn is None:
            raise SpecError(str(path), item.lineno, item.id,
                            f"scenario {item.id!r} has no check; add @{item.id}.check below it")
    return found


def _check_self_contained(item: Scenario, path: Path) -> None:
    """A program runs alone in the sandbox: refuse any global name it would not find there."""
    record = _scenario_file(item.filename)[2].get(item.lineno) if item.filename != "?" else None
    if record is not None and record["top"] and record["name"] == item.id:
        has_params, used = record["params"], set(record["globals"])  # its source alone, as below
    else:  # nested in another function: analyse its source alone here
        import symtable
        table = symtable.symtable(item.source, str(path), "exec").get_children()[0]
        has_params, used = bool(table.get_parameters()), scenario_index.globals_used(table)
    if not has_params:
        raise SpecError(str(path), item.lineno, item.id,
                        "a scenario program takes the student's module as its first argument")
    allowed = SANDBOX_GLOBALS | set(dir(builtins))
    missing = sorted(used - allowed)
    if missing:
        raise SpecError(str(path), item.lineno, item.id,
                        f"the program uses {', '.join(map(repr, missing))}, which the sandbox does not have; "
                        "a program may use only its arguments, np, attempt and builtins")
