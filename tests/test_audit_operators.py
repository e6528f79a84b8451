"""Automatic mutants (grader.audit.operators): the simple changes of task functions, the task-wide lies, ids,
and the normal form mutants are told apart by. Pure. (The realistic slips: test_audit_slips.py.)"""

from __future__ import annotations

import ast

import pytest

from grader.audit.functions import bound_names, functions, normal_module, normal_statements
from grader.audit.operators import DEGENERATE, LIES, NOTHING, Operator, automatic_mutants

SOURCE = '''"""A module."""


class Tape:
    def take(self, items, keep=False):
        """Hand out the items once."""
        if self.used:
            raise RuntimeError("used up")   # a comment
        if not keep:
            self.used = True
        return items


def smaller(a, b):
    return a < b and max(a, b) > 0
'''


def mutants_by_operator(source=SOURCE, owners=None):
    made = automatic_mutants(source, owners or {"Tape.take": "t", "smaller": "s"})
    by: dict[str, list] = {}
    for mutant in made:
        by.setdefault(mutant.operator, []).append(mutant)
    return made, by


def changed_lines(mutant, source=SOURCE):
    return [(a, b) for a, b in zip(source.splitlines(), mutant.source.splitlines()) if a != b]


SIMPLE = {"return_input", "return_none", "return_constant", "delete_statement", "negate_condition", "drop_not",
          "flip_boolean", "exception_class", "exception_message", "off_by_one", "swap_arguments"}


def test_every_simple_operator_and_every_lie_applies_where_it_fits():
    _, by = mutants_by_operator()
    assert SIMPLE | DEGENERATE <= set(by) <= {op.value for op in Operator}
    assert DEGENERATE == NOTHING | LIES and len(LIES) == 5


@pytest.mark.parametrize("operator, old, new", [
    ("return_input", "        return items", "        return self"),
    ("return_none", "        return items", "        return None"),
    ("return_constant", "        return items", "        return 0.0"),
    ("exception_class", '            raise RuntimeError("used up")   # a comment',
     '            raise ValueError("used up")   # a comment'),
    ("exception_message", '            raise RuntimeError("used up")   # a comment',
     "            raise RuntimeError('')   # a comment"),
    ("drop_not", "        if not keep:", "        if (keep):"),
    ("negate_condition", "        if self.used:", "        if not (self.used):"),
    ("flip_boolean", "            self.used = True", "            self.used = False"),
])
def test_a_mutant_changes_one_place_and_keeps_the_rest_of_the_text(operator, old, new):
    _, by = mutants_by_operator()
    mutant = next(m for m in by[operator] if changed_lines(m) == [(old, new)])
    assert mutant.task == "t" and mutant.id.startswith(f"Tape.take/{operator}/")


def test_a_default_value_is_a_boolean_constant_too():
    _, by = mutants_by_operator()
    assert any(changed_lines(m) == [("    def take(self, items, keep=False):", "    def take(self, items, keep=True):")]
               for m in by["flip_boolean"])


def test_comparisons_and_arguments():
    _, by = mutants_by_operator()
    assert [changed_lines(m)[0][1] for m in by["off_by_one"]] == [
        "    return (a <= b) and max(a, b) > 0", "    return a < b and (max(a, b) >= 0)"]
    assert [changed_lines(m)[0][1] for m in by["swap_arguments"]] == ["    return a < b and max(b, a) > 0"]


def test_delete_statement_reaches_nested_blocks_and_skips_docstrings():
    _, by = mutants_by_operator()
    deleted = {changed_lines(m)[0][0].strip() for m in by["delete_statement"] if m.function == "Tape.take"}
    assert 'raise RuntimeError("used up")   # a comment' in deleted
    assert "self.used = True" in deleted
    assert not any('"""' in line for line in deleted)


def test_negating_a_not_is_left_to_drop_not():
    _, by = mutants_by_operator()
    assert not any("not (not keep)" in m.source for m in by["negate_condition"])


def test_mutants_of_the_same_code_are_made_once_and_none_equals_the_reference():
    made, _ = mutants_by_operator()
    forms = [normal_module(ast.parse(m.source)) for m in made]
    assert len(forms) == len(set(forms))
    assert normal_module(ast.parse(SOURCE)) not in forms
    assert all(ast.parse(m.source) for m in made)


def test_a_task_s_degenerate_mutants_change_all_its_functions_and_win_over_return_none():
    made, _ = mutants_by_operator(owners={"Tape.take": "t", "smaller": "t"})
    degenerate = [m for m in made if m.operator in DEGENERATE]
    assert [m.id for m in degenerate] == ["t/task_returns_none", "t/task_returns_constant", "t/task_returns_anything",
                                          "t/task_returns_input", "t/task_returns_impostor", "t/task_returns_subclass",
                                          "t/task_ignores_input"]
    none = degenerate[0]
    located = functions(ast.parse(none.source))
    assert [ast.unparse(s) for s in located["Tape.take"].body] == ["return None"]
    assert [ast.unparse(s) for s in located["smaller"].body] == ["return None"]
    anything = functions(ast.parse(degenerate[2].source))["smaller"]
    namespace: dict = {}
    exec(compile(ast.Module(anything.body[:-1], []), "x", "exec"), namespace)
    thing = namespace["_Anything"]()
    assert thing == 42 and thing == "x" and thing.attribute() * 3 is thing


def test_a_single_function_task_s_return_none_is_its_degenerate_mutant():
    made, _ = mutants_by_operator(owners={"smaller": "s"})
    assert not any(m.operator == "return_none" for m in made)
    assert any(m.id == "s/task_returns_none" for m in made)


def test_ids_do_not_change_with_comments_or_other_functions():
    before, _ = mutants_by_operator(owners={"Tape.take": "t"})
    edited = SOURCE.replace("# a comment", "# another comment").replace("return a < b", "return b > a")
    after, _ = mutants_by_operator(edited, owners={"Tape.take": "t"})
    assert [m.id for m in before] == [m.id for m in after]
    changed = SOURCE.replace('"used up"', '"all used up"')
    assert [m.id for m in mutants_by_operator(changed, owners={"Tape.take": "t"})[0]] != [m.id for m in before]


def test_an_unknown_function_is_a_key_error():
    with pytest.raises(KeyError):
        automatic_mutants(SOURCE, {"Tape.give": "t"})


def test_the_normal_form_ignores_local_names_and_formatting_but_not_globals_or_attributes():
    def form(text):
        node = ast.parse(text).body[0]
        return normal_statements(node.body, bound_names(node))

    assert form("def f(x):\n    y = x * x\n    return Tensor(y)") == form(
        "def g(value):\n    # squared\n    result = (value *\n              value)\n    return Tensor(result)")
    assert form("def f(x):\n    return Tensor(x)") != form("def f(x):\n    return Array(x)")
    assert form("def f(x):\n    return x.data") != form("def f(x):\n    return x.value")
