"""Automatic mutants: small syntax-tree changes to the student's functions of each task. Pure.

The operators (each applied at every place it fits, one change per mutant):

=====================  ====================================================================
``return_input``       ``return e`` becomes ``return <first parameter>`` (``self`` for a method)
``return_none``        ``return e`` becomes ``return None``
``return_constant``    ``return e`` becomes ``return 0.0``
``delete_statement``   one statement becomes ``pass`` (at any depth)
``negate_condition``   the test of an ``if``, ``while``, ``assert`` or ``x if test else y``
                       becomes ``not (test)``
``drop_not``           ``not e`` becomes ``e``
``flip_boolean``       ``True`` becomes ``False`` and vice versa
``exception_class``    ``raise E(...)`` raises another class (RuntimeError <-> ValueError,
                       TypeError -> ValueError, anything else -> RuntimeError)
``exception_message``  ``raise E("...")`` raises it with an empty message
``off_by_one``         ``<`` <-> ``<=`` and ``>`` <-> ``>=`` in a comparison
``swap_arguments``     two neighbouring positional arguments of a call change places
=====================  ====================================================================

And three per task, changing all its functions at once (``<task>/<operator>``): ``task_returns_none``,
``task_returns_constant`` (``0.0``) and ``task_returns_anything`` (an object that claims to equal
everything and gives itself back for every attribute, call and arithmetic operation). A scenario of
the task that awards points and passes on one of these gives points for nothing.

The return operators apply to the function's own ``return`` statements, the others anywhere inside
it (nested functions and lambdas included). A change is spliced into the source text, so a mutant
differs from the reference only where it changed. Mutants that do not parse, or whose syntax tree
equals the reference's or an earlier mutant's, are dropped. A mutant's id is
``<function>/<operator>/<6 hex digits of the mutated function's syntax tree>``: stable while the
function's code is unchanged (comments and formatting do not count), so a list of equivalent mutants
goes stale, and is reported as such, when the function's code changes.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterator
from enum import Enum

from grader import python_ast
from grader.audit.functions import Located, functions, normal_module, normal_statements, with_body, without_docstring
from grader.audit.mutant import Kind, Mutant
from grader.records import record

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


class Operator(str, Enum):
    RETURN_INPUT = "return_input"
    RETURN_NONE = "return_none"
    RETURN_CONSTANT = "return_constant"
    DELETE_STATEMENT = "delete_statement"
    NEGATE_CONDITION = "negate_condition"
    DROP_NOT = "drop_not"
    FLIP_BOOLEAN = "flip_boolean"
    EXCEPTION_CLASS = "exception_class"
    EXCEPTION_MESSAGE = "exception_message"
    OFF_BY_ONE = "off_by_one"
    SWAP_ARGUMENTS = "swap_arguments"
    TASK_RETURNS_NONE = "task_returns_none"
    TASK_RETURNS_CONSTANT = "task_returns_constant"
    TASK_RETURNS_ANYTHING = "task_returns_anything"


# The operators whose mutant no scenario of the task may give points to.
DEGENERATE = {Operator.TASK_RETURNS_NONE.value, Operator.TASK_RETURNS_CONSTANT.value,
              Operator.TASK_RETURNS_ANYTHING.value}
_DEGENERATE_BODIES = {Operator.TASK_RETURNS_NONE: "return None", Operator.TASK_RETURNS_CONSTANT: "return 0.0",
                      Operator.TASK_RETURNS_ANYTHING: ANYTHING}


_OTHER_EXCEPTION = {"RuntimeError": "ValueError", "ValueError": "RuntimeError", "TypeError": "ValueError"}
_DOCUMENTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)   # their bodies may open with a docstring
_BOUNDARY = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


@record
class _Edit:
    """Replace the source text between two (line, column) positions (ast's: 1-based lines, 0-based
    UTF-8 byte columns) by ``text``; several edits of one mutant never overlap."""

    start: tuple[int, int]
    end: tuple[int, int]
    text: str


def automatic_mutants(reference: str, task_functions: dict[str, str]) -> list[Mutant]:
    """Every automatic mutant of ``reference``'s functions; ``task_functions`` maps a function's
    qualified name to its task. A name that is not a function of ``reference`` raises KeyError."""
    tree = python_ast.parse(reference)
    located = functions(tree)
    seen = {normal_module(tree)}
    mutants = _degenerate(reference, located, task_functions, seen)   # first: they win a tie with return_none
    for qualname, task in task_functions.items():
        function = located[qualname]
        for operator, edits in _candidates(function):
            source = _splice(reference, edits)
            try:
                form = normal_module(python_ast.parse(source))
            except SyntaxError:
                continue
            if form in seen:
                continue
            seen.add(form)
            mutated = normal_statements([functions(python_ast.parse(source))[qualname].node], frozenset())[0]
            digest = hashlib.sha256(f"{operator.value}\n{mutated}".encode()).hexdigest()[:6]
            mutants.append(Mutant(id=f"{qualname}/{operator.value}/{digest}", kind=Kind.AUTOMATIC, task=task,
                                  source=source, description=_describe(operator, reference, edits),
                                  function=qualname, operator=operator.value))
    return mutants


def _degenerate(reference: str, located: dict[str, Located], task_functions: dict[str, str],
                seen: set[str]) -> list[Mutant]:
    """The per-task mutants: every function of a task with the same trivial body."""
    by_task: dict[str, list[str]] = {}
    for qualname, task in task_functions.items():
        by_task.setdefault(task, []).append(qualname)
    mutants = []
    for task, names in by_task.items():
        for operator, body in _DEGENERATE_BODIES.items():
            source = reference
            for qualname in sorted(names, key=lambda name: located[name].first_line, reverse=True):
                source = with_body(source, located[qualname], body)   # bottom up: the spans above stay put
            form = normal_module(python_ast.parse(source))
            if form in seen:
                continue
            seen.add(form)
            what = {"task_returns_none": "None", "task_returns_constant": "0.0",
                    "task_returns_anything": "an object that claims to equal everything"}[operator.value]
            mutants.append(Mutant(id=f"{task}/{operator.value}", kind=Kind.AUTOMATIC, task=task, source=source,
                                  description=f"every function of {task} ({', '.join(names)}) returns {what}",
                                  operator=operator.value))
    return mutants


def _candidates(function: Located) -> Iterator[tuple[Operator, list[_Edit]]]:
    node = function.node
    own_values = [n.value for n in _own_nodes(node) if isinstance(n, ast.Return) and n.value is not None]
    params = node.args.posonlyargs + node.args.args
    for value in own_values:
        if params and not (isinstance(value, ast.Name) and value.id == params[0].arg):
            yield Operator.RETURN_INPUT, [_replace(value, params[0].arg)]
        if not (isinstance(value, ast.Constant) and value.value is None):
            yield Operator.RETURN_NONE, [_replace(value, "None")]
        if not isinstance(value, ast.Constant):
            yield Operator.RETURN_CONSTANT, [_replace(value, "0.0")]
    for statements in _statement_lists(node):
        for statement in statements:
            if not isinstance(statement, ast.Pass):
                yield Operator.DELETE_STATEMENT, [_replace(statement, "pass")]
    for child in ast.walk(node):
        yield from _expression_candidates(child)


def _expression_candidates(child: ast.AST) -> Iterator[tuple[Operator, list[_Edit]]]:
    if isinstance(child, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        if isinstance(child.test, ast.UnaryOp) and isinstance(child.test.op, ast.Not):
            return   # `if not x` negated is `if x`: drop_not's mutant
        yield Operator.NEGATE_CONDITION, [_replace(child.test, f"not ({ast.unparse(child.test)})")]
    elif isinstance(child, ast.comprehension):
        for test in child.ifs:
            yield Operator.NEGATE_CONDITION, [_replace(test, f"not ({ast.unparse(test)})")]
    elif isinstance(child, ast.UnaryOp) and isinstance(child.op, ast.Not):
        yield Operator.DROP_NOT, [_replace(child, f"({ast.unparse(child.operand)})")]
    elif isinstance(child, ast.Constant) and isinstance(child.value, bool):
        yield Operator.FLIP_BOOLEAN, [_replace(child, str(not child.value))]
    elif isinstance(child, ast.Raise) and child.exc is not None:
        call = child.exc if isinstance(child.exc, ast.Call) else None
        name: ast.expr = call.func if call is not None else child.exc
        if isinstance(name, ast.Name):
            yield Operator.EXCEPTION_CLASS, [_replace(name, _OTHER_EXCEPTION.get(name.id, "RuntimeError"))]
        if call is not None and call.args and not isinstance(call.args[0], ast.Starred):
            yield Operator.EXCEPTION_MESSAGE, [_replace(call.args[0], "''")]
    elif isinstance(child, ast.Compare):
        for index, op in enumerate(child.ops):
            if type(op) in _BOUNDARY:
                ops = list(child.ops)
                ops[index] = _BOUNDARY[type(op)]()
                flipped = ast.Compare(child.left, ops, child.comparators)
                yield Operator.OFF_BY_ONE, [_replace(child, f"({ast.unparse(flipped)})")]
    elif isinstance(child, ast.Call):
        args = child.args
        for i in range(len(args) - 1):
            if not isinstance(args[i], ast.Starred) and not isinstance(args[i + 1], ast.Starred):
                yield Operator.SWAP_ARGUMENTS, [_replace(args[i], ast.unparse(args[i + 1])),
                                                _replace(args[i + 1], ast.unparse(args[i]))]


def _own_nodes(function: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function outside its nested functions, classes and lambdas."""
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _statement_lists(function: ast.AST) -> Iterator[list[ast.stmt]]:
    for child in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(child, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                documented = field == "body" and isinstance(child, _DOCUMENTED)
                yield without_docstring(value) if documented else value


def _replace(node: ast.expr | ast.stmt, text: str) -> _Edit:
    end = (node.end_lineno or node.lineno, node.end_col_offset if node.end_col_offset is not None else node.col_offset)
    return _Edit((node.lineno, node.col_offset), end, text)


def _splice(source: str, edits: list[_Edit]) -> str:
    lines = [line.encode() for line in source.splitlines(keepends=True)]
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        (first, begin), (last, end) = edit.start, edit.end
        head, tail = lines[first - 1][:begin], lines[last - 1][end:]
        lines[first - 1:last] = [head + edit.text.encode() + tail]
    return b"".join(lines).decode()


def _describe(operator: Operator, source: str, edits: list[_Edit]) -> str:
    first = min(edits, key=lambda e: e.start)
    old = _text(source, first)
    old = old if len(old) <= 60 else old[:57] + "..."
    new = first.text if len(first.text) <= 60 else first.text[:57] + "..."
    return f"{operator.value}, line {first.start[0]}: {old} -> {new}"


def _text(source: str, edit: _Edit) -> str:
    lines = [line.encode() for line in source.splitlines(keepends=True)]
    (first, begin), (last, end) = edit.start, edit.end
    if first == last:
        return lines[first - 1][begin:end].decode().strip()
    return (lines[first - 1][begin:].decode().strip() + " ...").strip()
