"""The task-wide lies (grader.audit.lies) behave as their names say, run as the mutated module would run
them: the impostor passes isinstance and reads its values from the caller's frames, the subclass lies in its
properties, the value that ignores its input is computed for another object of its class."""

from __future__ import annotations

import types

import numpy as np

from grader.audit.operators import automatic_mutants

SOURCE = '''
import numpy as np


class Box:
    def __init__(self, data):
        self.data = np.array(data, dtype=float)
        self.flag = True

    def copy(self):
        """A new box of this one's values."""
        return Box(self.data)
'''


def lie(operator: str) -> types.ModuleType:
    mutant = next(m for m in automatic_mutants(SOURCE, {"Box.copy": "t"}) if m.operator == operator)
    module = types.ModuleType("mutated")
    exec(compile(mutant.source, "mutated.py", "exec"), module.__dict__)
    return module


def test_the_input_returned():
    module = lie("task_returns_input")
    box = module.Box([1.0, 2.0])
    assert box.copy() is box


def test_the_impostor_claims_its_input_s_class_and_reads_the_caller_s_frame():
    module = lie("task_returns_impostor")
    other = module.Box([7.0, 8.0])     # the last local of its class the impostor finds in this frame
    box = module.Box([1.0, 2.0])
    copied = box.copy()
    assert isinstance(copied, module.Box) and type(copied) is not module.Box
    assert np.array_equal(np.asarray(copied), box.data) and copied.flag is True
    assert other is not None


def test_the_subclass_lies_in_its_attributes():
    module = lie("task_returns_subclass")
    source = module.Box([3.0, 4.0])
    copied = source.copy()
    assert isinstance(copied, module.Box) and type(copied) is not module.Box
    assert np.array_equal(copied.data, source.data)   # read from the caller's frame: not its own state


def test_the_value_that_ignores_its_input():
    module = lie("task_ignores_input")
    decoy = module.Box([9.0, 9.0])
    box = module.Box([1.0, 2.0])
    assert np.array_equal(box.copy().data, box.data) is False   # computed for the other box of this frame
    assert np.array_equal(box.copy().data, decoy.data)


def test_nothing_and_anything():
    assert lie("task_returns_none").Box([1.0]).copy() is None
    assert lie("task_returns_constant").Box([1.0]).copy() == 0.0
    anything = lie("task_returns_anything").Box([1.0]).copy()
    assert anything == 42 and anything.data.shape == anything
