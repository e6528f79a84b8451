"""Automatic mutants: syntax-tree changes to the reference, each a slip a student could make. Pure.

Three families, each operator applied at every place it fits, one change per mutant:

*Task-wide lies* (:mod:`~grader.audit.lies`), one mutant per task, all its functions changed at once
(``<task>/<operator>``); no scenario of the task may give points to one of them:

=========================  ================================================================
``task_returns_none``      every function returns None
``task_returns_constant``  every function returns 0.0
``task_returns_anything``  an object that claims to equal everything
``task_returns_input``     every function returns its first argument
``task_returns_impostor``  an object whose ``__class__`` claims its input's class and whose
                           ``__array__``, ``__float__`` and attributes are read from the caller's frames
``task_returns_subclass``  an instance of a subclass of its input's class whose attributes
                           (properties included) lie, read from the caller's frames
``task_ignores_input``     the answer computed for another object of its input's class, found in the
                           caller's frames: a value that ignores its input
=========================  ================================================================

*Simple changes*, to the task functions only (the engine's code is left to the realistic ones):
``return_input`` (``return e`` becomes ``return <first parameter>``), ``return_none``,
``return_constant`` (``0.0``), ``delete_statement`` (one statement becomes ``pass``),
``negate_condition`` (``if t`` becomes ``if not (t)``), ``drop_not``, ``flip_boolean``.

*Realistic slips* (:mod:`~grader.audit.slips`), to every function of the reference, the task
functions and the provided engine alike, modelled on how students get this kind of code wrong:

=====================  ====================================================================
``off_by_one``         ``<`` <-> ``<=``, ``>`` <-> ``>=`` in a comparison
``off_by_one_count``   an integer of a comparison, arithmetic or index ``+1`` or ``-1``
``check_after_set``    an ``if self.flag`` moved after the statement that sets the flag
``class_state``        ``self.a = v`` becomes ``type(self).a = v``: shared by every object
``not_reset``          a reset to a fresh value (``[]``, None, a flag) outside ``__init__`` dropped
``reset_at_exit``      ``__exit__`` clears a container ``__init__`` made
``swap_statements``    two neighbouring statements exchanged (a reset before the read)
``done_twice``         a call made for its effect, or an accumulation, repeated
``alias``              a copy dropped: ``list(x)``, ``x.copy()``, ``x[:]`` -> ``x``; ``np.array`` -> ``np.asarray``
``copy_too_much``      ``return C(...)`` in a method of ``C`` also copies one of ``self``'s attributes
``copy_too_little``    a constructor argument that has a default left out
``parameter_ignored``  a use of a defaulted parameter reads its default instead
``wrong_name``         a parameter (or the attribute ``__init__`` stored it in) read for another
``container_type``     ``list`` <-> ``tuple``, ``type(x)(...)`` made a list, a type dropped from
                       ``isinstance(x, (A, B))``
``reversed_order``     ``reversed(x)`` walked forwards, a loop over a list walked backwards
``swap_operands``      ``a - b`` as ``b - a``; two neighbouring items of a tuple exchanged
``shape_flatten``      the array a class (or ``np.array``) is made from flattened first
``shape_1d``           ... made at least 1-d (a 0-d value becomes a 1-element vector)
``sign_lost``          ``-x`` -> ``x``, ``a - b`` -> ``a + b``
``factor_lost``        ``a * b`` -> ``a`` or ``b``, ``a / b`` -> ``a``
``exception_class``    ``raise E(...)`` raises another class (RuntimeError <-> ValueError, ...)
``exception_message``  ``raise E("...")`` raises it with an empty message
``swap_arguments``     two neighbouring positional arguments of a call change places
=====================  ====================================================================

Mutants that do not parse, or whose syntax tree equals the reference's or an earlier mutant's,
are dropped. A mutant's id is ``<function>/<operator>/<6 hex digits of the mutated function's syntax
tree>``: stable while the function's code is unchanged (comments and formatting do not count), so a
list of equivalent mutants goes stale, and is reported as such, when the function's code changes.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from enum import Enum

import grader.audit.lies as lies
import grader.audit.slips as slips
import grader.python_ast as python_ast
from grader.audit.edits import Edit, Lines, replace, splice, text_of
from grader.audit.functions import Located, functions, normal_module, normal_statements, with_body
from grader.audit.mutant import Kind, Mutant

ANYTHING = lies.ANYTHING


class Operator(str, Enum):
    TASK_RETURNS_NONE = "task_returns_none"
    TASK_RETURNS_CONSTANT = "task_returns_constant"
    TASK_RETURNS_ANYTHING = "task_returns_anything"
    TASK_RETURNS_INPUT = "task_returns_input"
    TASK_RETURNS_IMPOSTOR = "task_returns_impostor"
    TASK_RETURNS_SUBCLASS = "task_returns_subclass"
    TASK_IGNORES_INPUT = "task_ignores_input"
    RETURN_INPUT = "return_input"
    RETURN_NONE = "return_none"
    RETURN_CONSTANT = "return_constant"
    DELETE_STATEMENT = "delete_statement"
    NEGATE_CONDITION = "negate_condition"
    DROP_NOT = "drop_not"
    FLIP_BOOLEAN = "flip_boolean"
    OFF_BY_ONE = "off_by_one"
    OFF_BY_ONE_COUNT = "off_by_one_count"
    CHECK_AFTER_SET = "check_after_set"
    CLASS_STATE = "class_state"
    NOT_RESET = "not_reset"
    RESET_AT_EXIT = "reset_at_exit"
    SWAP_STATEMENTS = "swap_statements"
    DONE_TWICE = "done_twice"
    ALIAS = "alias"
    COPY_TOO_MUCH = "copy_too_much"
    COPY_TOO_LITTLE = "copy_too_little"
    PARAMETER_IGNORED = "parameter_ignored"
    WRONG_NAME = "wrong_name"
    CONTAINER_TYPE = "container_type"
    REVERSED_ORDER = "reversed_order"
    SWAP_OPERANDS = "swap_operands"
    SHAPE_FLATTEN = "shape_flatten"
    SHAPE_1D = "shape_1d"
    SIGN_LOST = "sign_lost"
    FACTOR_LOST = "factor_lost"
    EXCEPTION_CLASS = "exception_class"
    EXCEPTION_MESSAGE = "exception_message"
    SWAP_ARGUMENTS = "swap_arguments"


# The task-wide mutants no scenario of the task may give points to: nothing, and lies.
NOTHING = frozenset({Operator.TASK_RETURNS_NONE.value, Operator.TASK_RETURNS_CONSTANT.value})
LIES = frozenset({Operator.TASK_RETURNS_ANYTHING.value, Operator.TASK_RETURNS_INPUT.value,
                  Operator.TASK_RETURNS_IMPOSTOR.value, Operator.TASK_RETURNS_SUBCLASS.value,
                  Operator.TASK_IGNORES_INPUT.value})
DEGENERATE = NOTHING | LIES

_OTHER_EXCEPTION = {"RuntimeError": "ValueError", "ValueError": "RuntimeError", "TypeError": "ValueError"}
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


def automatic_mutants(reference: str, task_functions: dict[str, str], provided_task: str | None = None) -> list[Mutant]:
    """Every automatic mutant of ``reference``. ``task_functions`` maps a task function's qualified
    name to its task (a name that is not a function of ``reference`` raises KeyError); with
    ``provided_task``, every other function of ``reference`` (the provided code) gets the realistic
    slips too, as mutants of that task."""
    tree = python_ast.parse(reference)
    located = functions(tree)
    module = slips.Module(tree, reference, located)
    seen = {normal_module(tree)}
    mutants = _task_wide(reference, located, task_functions, seen)   # first: they win a tie with return_none
    targets = [(name, task, True) for name, task in task_functions.items()]
    if provided_task is not None:
        targets += [(name, provided_task, False) for name in located if name not in task_functions]
    for qualname, task, own in targets:
        function = located[qualname]
        for operator, edits in _candidates(function, module, simple=own):
            source = splice(reference, edits)
            try:
                form = normal_module(python_ast.parse(source))
            except SyntaxError:
                continue
            if form in seen:
                continue
            seen.add(form)
            mutated = normal_statements([functions(python_ast.parse(source))[qualname].node], frozenset())[0]
            digest = hashlib.sha256(f"{operator}\n{mutated}".encode()).hexdigest()[:6]
            mutants.append(Mutant(id=f"{qualname}/{operator}/{digest}", kind=Kind.AUTOMATIC, task=task,
                                  source=source, description=_describe(operator, reference, edits),
                                  function=qualname, operator=operator))
    return mutants


def _task_wide(reference: str, located: dict[str, Located], task_functions: dict[str, str],
               seen: set[str]) -> list[Mutant]:
    """The per-task mutants: every function of a task with the same lie (or nothing)."""
    by_task: dict[str, list[str]] = {}
    for qualname, task in task_functions.items():
        by_task.setdefault(task, []).append(qualname)
    mutants = []
    for task, names in by_task.items():
        for operator in (o for o in Operator if o.value in DEGENERATE):
            source = reference
            for qualname in sorted(names, key=lambda name: located[name].first_line, reverse=True):
                source = _lie(source, located[qualname], operator.value)   # bottom up: the spans above stay put
            form = normal_module(python_ast.parse(source))
            if form in seen:
                continue
            seen.add(form)
            mutants.append(Mutant(id=f"{task}/{operator.value}", kind=Kind.AUTOMATIC, task=task, source=source,
                                  description=f"every function of {task} ({', '.join(names)}) "
                                              f"{lies.DESCRIPTIONS[operator.value]}", operator=operator.value))
    return mutants


def _lie(source: str, function: Located, operator: str) -> str:
    params = function.node.args.posonlyargs + function.node.args.args
    first = params[0].arg if params else "None"
    if operator != Operator.TASK_IGNORES_INPUT.value:
        return with_body(source, function, lies.BODIES[operator].format(first=first))
    if not params:
        return with_body(source, function, "return None")
    own = "".join(ast.unparse(statement) + "\n" for statement in function.body)
    return with_body(source, function, lies.IGNORES_INPUT.format(first=first) + own)


def _candidates(function: Located, module: slips.Module, simple: bool) -> Iterator[tuple[str, list[Edit]]]:
    if simple:
        yield from ((operator.value, edits) for operator, edits in _simple(function, module.lines))
    for child in slips.walk_body(function):
        yield from ((operator.value, edits) for operator, edits in _expression_candidates(child))
    for slip in slips.SLIPS:
        yield from slip(function, module)


def _simple(function: Located, lines: Lines) -> Iterator[tuple[Operator, list[Edit]]]:
    node = function.node
    own_values = [n.value for n in slips.own_returns(function) if n.value is not None]
    params = node.args.posonlyargs + node.args.args
    for value in own_values:
        if params and not (isinstance(value, ast.Name) and value.id == params[0].arg):
            yield Operator.RETURN_INPUT, [replace(value, params[0].arg)]
        if not (isinstance(value, ast.Constant) and value.value is None):
            yield Operator.RETURN_NONE, [replace(value, "None")]
        if not isinstance(value, ast.Constant):
            yield Operator.RETURN_CONSTANT, [replace(value, "0.0")]
    for statements in slips.blocks(function):
        for statement in statements:
            if not isinstance(statement, ast.Pass):
                yield Operator.DELETE_STATEMENT, [replace(statement, "pass")]
    for child in ast.walk(node):
        if isinstance(child, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            if isinstance(child.test, ast.UnaryOp) and isinstance(child.test.op, ast.Not):
                continue   # `if not x` negated is `if x`: drop_not's mutant
            yield Operator.NEGATE_CONDITION, [replace(child.test, f"not ({ast.unparse(child.test)})")]
        elif isinstance(child, ast.comprehension):
            for test in child.ifs:
                yield Operator.NEGATE_CONDITION, [replace(test, f"not ({ast.unparse(test)})")]
        elif isinstance(child, ast.UnaryOp) and isinstance(child.op, ast.Not):
            yield Operator.DROP_NOT, [replace(child, f"({ast.unparse(child.operand)})")]
        elif isinstance(child, ast.Constant) and isinstance(child.value, bool):
            yield Operator.FLIP_BOOLEAN, [replace(child, str(not child.value))]


def _expression_candidates(child: ast.AST) -> Iterator[tuple[Operator, list[Edit]]]:
    """The realistic changes of one expression: exceptions, comparisons, arguments."""
    if isinstance(child, ast.Raise) and child.exc is not None:
        call = child.exc if isinstance(child.exc, ast.Call) else None
        name: ast.expr = call.func if call is not None else child.exc
        if isinstance(name, ast.Name):
            yield Operator.EXCEPTION_CLASS, [replace(name, _OTHER_EXCEPTION.get(name.id, "RuntimeError"))]
        if call is not None and call.args and not isinstance(call.args[0], ast.Starred):
            yield Operator.EXCEPTION_MESSAGE, [replace(call.args[0], "''")]
    elif isinstance(child, ast.Compare):
        for index, op in enumerate(child.ops):
            if type(op) in _BOUNDARY:
                ops = list(child.ops)
                ops[index] = _BOUNDARY[type(op)]()
                flipped = ast.Compare(child.left, ops, child.comparators)
                yield Operator.OFF_BY_ONE, [replace(child, f"({ast.unparse(flipped)})")]
    elif isinstance(child, ast.Call):
        args = child.args
        for i in range(len(args) - 1):
            if not isinstance(args[i], ast.Starred) and not isinstance(args[i + 1], ast.Starred):
                yield Operator.SWAP_ARGUMENTS, [replace(args[i], ast.unparse(args[i + 1])),
                                                replace(args[i + 1], ast.unparse(args[i]))]


def _describe(operator: str, source: str, edits: list[Edit]) -> str:
    first = min(edits, key=lambda e: e.start)
    old = " ".join(text_of(source, first).split()) or "(nothing)"
    old = old if len(old) <= 60 else old[:57] + "..."
    new = " ".join(first.text.split()) or "(nothing)"
    new = new if len(new) <= 60 else new[:57] + "..."
    return f"{operator}, line {first.start[0]}: {old} -> {new}"
