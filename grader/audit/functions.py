"""Functions of a Python source by qualified name, and their syntax trees in a normal form. Pure.

``Tensor.detach`` names the method ``detach`` of the top-level class ``Tensor``; ``stop_gradient`` a
top-level function. The normal form (:func:`normal_statements`) is what makes two pieces of code "the
same" for the audit and the release's leak check: comments, docstrings, formatting and the names of
parameters and local variables do not count; the structure, the attributes and the global names do.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterator, Sequence

from grader.records import record

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@record
class Located:
    """A function of a source: its node and where its text is (1-based lines, inclusive)."""

    qualname: str
    node: FunctionNode
    first_line: int      # the first decorator's line, else the def line
    last_line: int

    @property
    def body(self) -> list[ast.stmt]:
        """The statements after the docstring."""
        return without_docstring(self.node.body)


def functions(tree: ast.Module) -> dict[str, Located]:
    """Every function at the top level or in a (nested) top-level class, by qualified name."""
    found: dict[str, Located] = {}

    def visit(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                found[prefix + node.name] = Located(prefix + node.name, node, first, node.end_lineno or node.lineno)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def bound_names(node: ast.AST) -> frozenset[str]:
    """Names a function binds anywhere inside it: parameters (its own, nested functions' and lambdas'),
    assignment and loop targets, ``with ... as``, ``except ... as``, imports and nested definitions."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.arg):
            names.add(child.arg)
        elif isinstance(child, ast.Name) and isinstance(child.ctx, (ast.Store, ast.Del)):
            names.add(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and child is not node:
            names.add(child.name)
        elif isinstance(child, ast.ExceptHandler) and child.name is not None:
            names.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in child.names)
    return frozenset(names)


class _Canonical(ast.NodeTransformer):
    """Rename each of the ``bound`` names to ``_``; drop docstrings and annotations.

    One placeholder for every local name makes a statement's form independent of its neighbours, so
    a copy is found statement by statement; code that differs only in which local is which (``a = b``
    against ``b = a``) looks the same, which for finding copies is the safe side."""

    def __init__(self, bound: frozenset[str]):
        self.bound = bound

    def _name(self, name: str) -> str:
        return "_" if name in self.bound else name

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(self._name(node.id), node.ctx), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.arg(self._name(node.arg), None)

    def _function(self, node):
        node.name = self._name(node.name)
        node.body = without_docstring(node.body) or [ast.Pass()]
        node.returns, node.decorator_list = None, [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        node.body = [self.visit(statement) for statement in node.body]
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is None:
            return ast.Pass()
        return ast.Assign([self.visit(node.target)], self.visit(node.value))


def normal_statements(statements: Sequence[ast.stmt], bound: frozenset[str]) -> tuple[str, ...]:
    """The normal form of each statement (see the module doc); ``bound`` are the enclosing function's
    own names (:func:`bound_names`), which do not count."""
    import copy
    canonical = _Canonical(bound)
    return tuple(ast.dump(canonical.visit(copy.deepcopy(s)), annotate_fields=False, include_attributes=False)
                 for s in statements)


def normal_module(tree: ast.Module) -> str:
    """The normal form of a whole module: docstrings, comments and formatting do not count."""
    import copy
    tree = copy.deepcopy(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            node.body = without_docstring(node.body) or [ast.Pass()]
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


def statement_lists(node: ast.AST) -> Iterator[list[ast.stmt]]:
    """Every list of statements inside ``node`` (bodies, else branches, handlers), outermost first."""
    for child in ast.walk(node):
        for field in ("body", "orelse", "finalbody"):
            value = getattr(child, field, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield without_docstring(value) if field == "body" else value


def with_body(reference: str, located, body: str) -> str:
    """``reference`` with the statements of a function after its docstring replaced by ``body``
    (comments on the lines around them, like task markers, stay)."""
    lines = reference.splitlines(keepends=True)
    statements = located.body
    first, last = (statements[0], statements[-1]) if statements else (None, located.node.body[-1])
    indent = " " * located.node.body[0].col_offset
    new = textwrap.indent(textwrap.dedent(body).strip("\n") + "\n", indent, lambda text: True)
    new = "".join(line if line.strip() else "\n" for line in new.splitlines(keepends=True))
    begin = first.lineno - 1 if first is not None else last.end_lineno   # only a docstring: after it
    return "".join(lines[:begin]) + new + "".join(lines[last.end_lineno:])
