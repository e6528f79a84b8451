"""The realistic operators (grader.audit.slips): each one makes the slip it is named for, where it fits,
and not where the change would be invisible by construction. Pure."""

from __future__ import annotations

import ast
import difflib
import functools
import textwrap

import pytest

from grader.audit.operators import Operator, automatic_mutants
from grader.audit.slips import SLIPS

# A small stateful module in the style of the exercise's engine: a class whose __init__ sets up state, a
# context manager, a counter, a copy, a numeric rule. Every function is "provided code" here, so it gets
# the realistic slips only.
MODULE = '''
import copy

import numpy as np


class Box:
    def __init__(self, data, limit=2, strict=True, loud=False):
        self.data = np.array(data, dtype=float)
        self.limit = limit
        self.strict = strict
        self.loud = loud
        self.items = []
        self.seen = set()
        self.used = False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.open = False

    def take(self):
        if self.used:
            raise RuntimeError("used up")
        items = self.items
        if not self.strict:
            self.items, self.used = [], True
        return items, self.seen

    def count(self, n):
        self.calls = getattr(self, "calls", 0) + 1
        if self.calls > self.limit:
            return None
        for item in self.items:
            self.log(item)
        return list(self.items)

    def log(self, item):
        self.items.append(item)

    def grow(self, extra):
        total = 0
        total = total + extra
        self.items.extend(reversed(self.items[:]))
        return Box(self.data, limit=self.limit)

    def rule(self, g):
        return (g * self.data, -g / self.data, g - self.data)

    def kind(self, x):
        return type(x)(v for v in x) if isinstance(x, (list, tuple)) else tuple(x)
'''


@functools.cache
def all_mutants():
    return tuple(automatic_mutants(MODULE, {}, provided_task="p"))


def mutated(operator: str) -> list[tuple[str, list[str]]]:
    """Each mutant of MODULE by ``operator``: (function, the lines it added, as they read; a move adds none)."""
    found = []
    for mutant in all_mutants():
        if mutant.operator == operator:
            diff = list(difflib.ndiff(MODULE.splitlines(), mutant.source.splitlines()))
            added = [line[2:].strip() for line in diff if line.startswith("+ ")]
            removed = sorted(line[2:].strip() for line in diff if line.startswith("- "))
            found.append((mutant.function, [] if sorted(added) == removed else added))
    return found


def changes(operator: str, function: str) -> list[list[str]]:
    return [lines for name, lines in mutated(operator) if name == function]


def test_every_slip_of_the_table_is_an_operator():
    assert {slip.__name__ for slip in SLIPS} <= {op.value for op in Operator}
    assert len(SLIPS) + 3 >= 15   # with off_by_one, exception_class/message and swap_arguments: at least 15


def test_off_by_one_count_moves_an_integer_of_a_comparison_by_one():
    made = changes("off_by_one_count", "Box.count")
    assert ['self.calls = getattr(self, "calls", 0) + 2'] in made
    assert ['self.calls = getattr(self, "calls", 0) + 0'] in made


def test_check_after_set_tests_a_flag_after_the_statement_that_sets_it():
    (lines,) = changes("check_after_set", "Box.take")
    body = MODULE.split("def take(self):")[1].split("def count")[0]
    mutant = next(m for m in all_mutants() if m.operator == "check_after_set")
    new_body = mutant.source.split("def take(self):")[1].split("def count")[0]
    assert new_body.index("if not self.strict:") < new_body.index("if self.used:")
    assert body.index("if self.used:") < body.index("if not self.strict:")
    assert lines == []   # a move: every line is the reference's, in another order


def test_class_state_keeps_a_mutable_on_the_class_and_leaves_constants_alone():
    made = changes("class_state", "Box.__init__")
    assert ["type(self).items = []"] in made and ["type(self).data = np.array(data, dtype=float)"] in made
    assert ["type(self).used = False"] not in made   # an immutable start value: the instance's own shadows it


def test_not_reset_drops_one_reset_of_a_tuple_assignment():
    made = changes("not_reset", "Box.take")
    assert ["self.used = True"] in made and ["self.items = []"] in made


def test_reset_at_exit_clears_what_init_made():
    made = changes("reset_at_exit", "Box.__exit__")
    assert ["self.items = []"] in made and ["self.seen = set()"] in made
    assert all(lines != ["self.used = False"] for lines in made)   # a flag is not a container


def test_swap_statements_only_where_the_order_matters():
    made = [lines for _, lines in mutated("swap_statements")]
    mutants = [m for m in all_mutants() if m.operator == "swap_statements"]
    assert any(m.function == "Box.grow" for m in mutants)          # total = 0 then total = total + extra
    assert not any(m.function == "Box.__init__" for m in mutants)  # independent assignments
    assert all(lines == [] for lines in made)   # a move of whole lines


def test_done_twice_repeats_an_effect_or_an_accumulation_not_an_idempotent_call():
    calls = [m for m in all_mutants() if m.operator == "done_twice"]
    functions = {m.function for m in calls}
    assert {"Box.count", "Box.log", "Box.grow"} <= functions
    assert all(m.source.count("self.items.append(item)") == 2 for m in calls if m.function == "Box.log")


def test_alias_drops_a_copy():
    assert ["return self.items"] in changes("alias", "Box.count")
    assert ["self.data = np.asarray(data, dtype=float)"] in changes("alias", "Box.__init__")
    assert ["self.items.extend(reversed(self.items))"] in changes("alias", "Box.grow")


def test_copy_too_much_and_too_little():
    much = changes("copy_too_much", "Box.grow")
    assert ["copied = Box(self.data, limit=self.limit)", "copied.items = self.items", "return copied"] in much
    assert not any("copied.limit = self.limit" in lines for lines in much)   # passed already
    assert ["return Box(self.data)"] in changes("copy_too_little", "Box.grow")


def test_parameter_ignored_and_wrong_name():
    assert ["self.strict = True"] in changes("parameter_ignored", "Box.__init__")
    assert ["self.strict = loud"] in changes("wrong_name", "Box.__init__")        # both booleans
    assert ["if not self.loud:"] in changes("wrong_name", "Box.take")             # the attributes they went to
    assert not any("limit" in " ".join(lines) for lines in changes("wrong_name", "Box.__init__"))


def test_container_type():
    made = changes("container_type", "Box.kind")
    assert any("list(v for v in x)" in lines[0] for lines in made)
    assert any("isinstance(x, list)" in lines[0] for lines in made)
    assert any(lines[0].endswith("else list(x)") for lines in made)


def test_reversed_order_walks_a_list_the_other_way():
    assert ["self.items.extend(self.items[:])"] in changes("reversed_order", "Box.grow")
    assert ["for item in reversed(self.items):"] in changes("reversed_order", "Box.count")


def test_swap_operands_of_ordered_operations_and_tuples():
    made = changes("swap_operands", "Box.rule")
    assert ["return (g * self.data, (self.data / -g), g - self.data)"] in made
    assert ["return (-g / self.data, g * self.data, g - self.data)"] in made
    assert not any("isinstance(x, (tuple, list))" in " ".join(lines) for lines in changes("swap_operands", "Box.kind"))


def test_shapes_signs_and_factors():
    assert ["self.data = np.array(np.ravel(data), dtype=float)"] in changes("shape_flatten", "Box.__init__")
    assert ["return Box(np.atleast_1d(self.data), limit=self.limit)"] in changes("shape_1d", "Box.grow")
    assert ["return (g * self.data, (g) / self.data, g - self.data)"] in changes("sign_lost", "Box.rule")
    assert ["return (g * self.data, -g / self.data, (g + self.data))"] in changes("sign_lost", "Box.rule")
    assert ["return ((g), -g / self.data, g - self.data)"] in changes("factor_lost", "Box.rule")


@pytest.mark.parametrize("operator", [slip.__name__ for slip in SLIPS])
def test_every_slip_makes_a_mutant_of_this_module_that_parses(operator):
    made = [m for m in all_mutants() if m.operator == operator]
    assert made, operator
    for mutant in made:
        ast.parse(mutant.source)
        assert mutant.task == "p" and mutant.id.startswith(f"{mutant.function}/{operator}/")


def test_the_provided_code_gets_no_simple_changes():
    operators = {m.operator for m in all_mutants()}
    assert not operators & {"return_none", "return_constant", "delete_statement", "negate_condition"}
    task = {m.operator for m in automatic_mutants(MODULE, {"Box.take": "t"}) if m.function == "Box.take"}
    assert {"return_none", "delete_statement", "check_after_set", "not_reset"} <= task


def test_a_slip_in_a_nested_function_is_found_too():
    source = textwrap.dedent('''
        def outer(a, b):
            def vjp(g):
                return -g, g * a
            return vjp
        ''')
    made = {m.description for m in automatic_mutants(source, {}, provided_task="p")}
    assert any(d.startswith("sign_lost") for d in made) and any(d.startswith("factor_lost") for d in made)
