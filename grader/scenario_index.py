"""What grading needs to know of a scenario file without running it, from its text alone.

For each function the file defines (nested ones too), one record::

    {"name": "detach_blocks_gradient", "start": 12, "line": 13, "end": 18, "top": true,
     "inputs": false, "scenario": true, "params": true, "globals": ["np"]}

``start`` is its first line (decorators included), ``line`` its ``def``, ``end`` its last line;
``top`` whether it sits at the module's top level; ``inputs`` whether a decorator takes arguments
(``@scenario(inputs=...)``); ``scenario`` whether one of its decorators is named ``scenario``. For a
top-level function, analysed alone as the sandbox compiles a program: ``params`` whether it takes
any, ``globals`` the global names it and the functions inside it use (None for nested functions).
The spec cuts programs out of the file by these lines and checks with them that a program is
self-contained.

A pure function of the text (and of the Python that parses it): the loading edge keeps it in the
spec cache (:mod:`grader.spec_cache`), so ``grader check`` on an unchanged scenario file neither
parses it nor builds its symbol tables.
"""

from __future__ import annotations

import functools
from typing import Any

# Part of every cached index's stamp: change it whenever the records' meaning changes.
INDEX_VERSION = 2

FIELDS: dict[str, type | tuple[type, ...]] = {
    "name": str, "start": int, "line": int, "end": int, "top": bool, "inputs": bool, "scenario": bool,
    "params": (bool, type(None)), "globals": (list, type(None))}


# A program's def line, up to its first parameter (comments may sit between them).
_FIRST_PARAMETER = r"\s*(?:async\s+)?def\s+\w+\s*\(\s*(?:#[^\n]*\n\s*)*([A-Za-z_]\w*)"


def module_parameter(program: str) -> str | None:
    """The name a program (its source, from its ``def`` line on) takes the student's module by: its
    first parameter, None when it has no plain one. The spec checks it against ``module_alias``;
    feedback names it beside the program."""
    import re
    found = re.match(_FIRST_PARAMETER, program)
    return found[1] if found else None


@functools.lru_cache(maxsize=8)
def functions(text: str) -> tuple[dict, ...]:
    """The records of every function ``text`` defines, in order of their ``def`` lines (never
    mutate them: they are shared). Raises SyntaxError (or ValueError) as ``ast.parse`` would."""
    return tuple(_index(text))


def well_formed(records) -> bool:
    """Records as :func:`functions` makes them (what a cache hands back is checked with this)."""
    return isinstance(records, (list, tuple)) and all(
        isinstance(record, dict) and record.keys() == FIELDS.keys()
        and all(isinstance(record[name], kind) for name, kind in FIELDS.items()) for record in records)


def _index(text: str) -> list[dict]:
    import ast
    import symtable
    import textwrap

    import grader.python_ast as python_ast
    lines = text.splitlines(keepends=True)
    records = []
    for node, top in _function_nodes(python_ast.parse(text)):
        record = {"name": node.name, "start": min([node.lineno, *(d.lineno for d in node.decorator_list)]),
                  "line": node.lineno, "end": node.end_lineno, "top": top,
                  "inputs": any(isinstance(d, ast.Call) and bool(d.keywords or d.args) for d in node.decorator_list),
                  "scenario": any(_named(d) == "scenario" for d in node.decorator_list),
                  "params": None, "globals": None}
        if top:
            # Its source alone, as the sandbox compiles a program: no `from __future__` of the file,
            # so names in annotations count, as they would be evaluated there.
            source = textwrap.dedent("".join(lines[node.lineno - 1: node.end_lineno]))
            table: Any = symtable.symtable(source, "scenarios.py", "exec").get_children()[0]  # a Function
            record.update(params=bool(table.get_parameters()), globals=sorted(globals_used(table)))
        records.append(record)
    return sorted(records, key=lambda record: record["line"])


def _named(decorator) -> str | None:
    """The last name of a decorator: ``scenario`` for ``@scenario``, ``@grader.scenario.scenario(...)``."""
    import ast
    node = decorator.func if isinstance(decorator, ast.Call) else decorator
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _function_nodes(tree):
    """(definition, at the top level?) for every function in ``tree``. They only sit in statement
    lists, so expressions (most of the tree) are never walked."""
    import ast
    statements = [(node, True) for node in tree.body]
    while statements:
        node, top = statements.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, top
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            statements.extend((child, False) for child in getattr(node, name, ()))


def globals_used(table) -> set[str]:
    """The global names a function's table (and the tables inside it) refer to."""
    names = set(table.get_globals()) if table.get_type() == "function" else set()
    for child in table.get_children():
        names |= globals_used(child)
    return names
