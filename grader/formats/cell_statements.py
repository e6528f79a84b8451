"""Which top-level statements of a notebook become part of the module the grader imports.

A notebook mixes the code to grade with code that only demonstrates it (prints, plots, a
training loop, ``x.grad`` to look at), and importing the module must not run the latter: it could
fail on a task not done yet, take minutes, or need a display. By default
(:attr:`CellPolicy.DEFINITIONS`) a top-level statement is kept when it is

* a ``def`` or ``class`` (decorated or not),
* an ``import`` of the standard library or numpy (an import of a forbidden module is kept too, so
  that it is refused as in a ``.py``; other imports, ``matplotlib``, ``d2l``, ``ipywidgets``, are
  dropped: graded code cannot use them),
* a *simple assignment*: ``=``, ``+=`` or an annotated one whose right side calls nothing
  (literals, names, attributes, subscripts, operators, lambdas: ``_grad_mode = [True]``,
  ``Tensor.detach = detach``), or a bare string (a docstring) or ``pass``;

and it is dropped when it is anything else (an expression such as ``print(...)``, a call, a
``for``/``while``/``with``/``if``/``try`` block, an ``assert``). A kept statement that uses a name
only a dropped one defines (``y = x * x`` after ``x = Tensor(...)``, a decorator from ``d2l``)
is dropped too. Statements on one line (``a = 1; print(a)``) are kept or dropped together: kept
only if each would be. D2L's ``from d2lbook import tab`` and ``tab.interact_select(...)`` are
dropped under either policy. With :attr:`CellPolicy.ALL` (an assignment that needs top-level
state) every statement is kept.
"""

from __future__ import annotations

import ast
import sys
from enum import Enum

from grader.formats.dropped import Dropped, DropReason

_AVAILABLE = frozenset(sys.stdlib_module_names) | {"numpy"}
# Expressions that compute a value without calling anything at import (a lambda's body runs later).
_STATIC = (ast.Constant, ast.Name, ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Set,
           ast.Dict, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Starred, ast.Lambda,
           ast.JoinedStr, ast.FormattedValue, ast.expr_context, ast.operator, ast.unaryop, ast.boolop,
           ast.cmpop)


class CellPolicy(Enum):
    """Which top-level statements of the code cells the grader imports (an assignment's choice)."""

    DEFINITIONS = "definitions"  # definitions, imports and simple assignments (the rule above)
    ALL = "all"                  # every statement, as "Run All" would


class Names:
    """The names that only dropped statements define so far, across the cells of a notebook."""

    def __init__(self) -> None:
        self.dropped: set[str] = set()

    def bind(self, statement: ast.stmt, kept: bool) -> None:
        names = _bound(statement)
        if kept:
            self.dropped -= names
        else:
            self.dropped |= names


def select_statements(tree: ast.Module, lines: tuple[str, ...], policy: CellPolicy, forbidden: tuple[str, ...],
                      names: Names) -> list[Dropped]:
    """The top-level statements of one parsed cell to leave out, as :class:`Dropped` line ranges
    (1-based, in the cell); ``names`` carries what earlier cells dropped."""
    dropped = []
    for group in _groups(tree.body):
        reasons = [_reason(statement, policy, forbidden, names) for statement in group]
        reason = next((r for r in reasons if r is not None), None)
        for statement in group:
            names.bind(statement, kept=reason is None)
        if reason is not None:
            first, last = _first_line(group[0]), group[-1].end_lineno or group[-1].lineno
            dropped.append(Dropped(first, last, lines[first - 1].strip(), reason))
    return dropped


def _groups(body: list[ast.stmt]) -> list[list[ast.stmt]]:
    """The statements, grouped where they share a line."""
    groups: list[list[ast.stmt]] = []
    for statement in body:
        if groups and _first_line(statement) <= (groups[-1][-1].end_lineno or groups[-1][-1].lineno):
            groups[-1].append(statement)
        else:
            groups.append([statement])
    return groups


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(d.lineno for d in decorators)])


def _reason(statement: ast.stmt, policy: CellPolicy, forbidden: tuple[str, ...], names: Names) -> DropReason | None:
    """Why ``statement`` is left out, or None when it is kept."""
    if _is_d2l_tab(statement):
        return DropReason.D2L_TAB
    if policy is CellPolicy.ALL:
        return None
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        modules = _imported(statement)
        if any(_top(m) in forbidden for m in modules) or (modules and all(_top(m) in _AVAILABLE for m in modules)):
            return None
        return DropReason.UNAVAILABLE_IMPORT
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        evaluated = [*statement.decorator_list]
        if isinstance(statement, ast.ClassDef):
            evaluated += [*statement.bases, *(k.value for k in statement.keywords)]
        else:
            evaluated += [*statement.args.defaults, *(d for d in statement.args.kw_defaults if d is not None)]
        return DropReason.DEPENDS_ON_DROPPED if _uses(evaluated, names) else None
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        value = statement.value
        if value is not None and not _static(value):
            return DropReason.CALLS
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return DropReason.DEPENDS_ON_DROPPED if _uses([*targets, value], names) else None
    if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
                                           and isinstance(statement.value.value, str)):
        return None
    return DropReason.DEMONSTRATION


def _is_d2l_tab(statement: ast.stmt) -> bool:
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return any(_top(m) == "d2lbook" for m in _imported(statement))
    call = statement.value if isinstance(statement, ast.Expr) else None
    return (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id == "tab")


def _imported(statement: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    return [statement.module or ""] if statement.level == 0 else []  # a relative import: no package here


def _top(module: str) -> str:
    return module.partition(".")[0]


def _static(node: ast.AST) -> bool:
    if not isinstance(node, _STATIC):
        return False
    if isinstance(node, ast.Lambda):
        return True  # its body runs when called, not at import
    return all(_static(child) for child in ast.iter_child_nodes(node))


def _uses(nodes: list, names: Names) -> bool:
    """Whether any of ``nodes`` reads a name that only a dropped statement defines."""
    if not names.dropped:
        return False
    return any(isinstance(n, ast.Name) and n.id in names.dropped and not isinstance(n.ctx, ast.Store)
               for node in nodes if node is not None for n in ast.walk(node))


def _bound(statement: ast.stmt) -> set[str]:
    """The names a top-level statement binds."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.partition(".")[0] for alias in statement.names}
    return {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
