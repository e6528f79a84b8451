"""Realistic operators: the slips students make in code like this, each applied wherever it fits. Pure.

Each operator below is a generator ``(function, module) -> (name, edits)`` over one function of the
reference, modelled on how students get stateful, numeric code wrong (the table in
:mod:`grader.audit.operators` lists them with an example each). None of them knows the exercise:
they read only the syntax tree (the function, its class's ``__init__``, the module's classes and
how it imports numpy).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from typing import TypeGuard

from grader.audit.edits import Edit, Lines, replace
from grader.audit.functions import Located, without_docstring

Candidate = tuple[str, list[Edit]]

FRESH_CALLS = {"list", "dict", "set", "tuple"}          # called with no argument: a fresh, empty value
COPYING_CALLS = {"list", "set", "dict"}                 # called with one argument: a copy of it
IDEMPOTENT = {"add", "update", "discard", "setdefault"}   # a second call changes nothing
ORDERED = (ast.Sub, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)   # operands whose order matters


class Module:
    """What the operators need to know of the reference module besides the function itself."""

    def __init__(self, tree: ast.Module, source: str, located: dict[str, Located]):
        self.tree, self.lines, self.located = tree, Lines(source), located
        self.classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        self.numpy = next((alias.asname or alias.name for node in tree.body if isinstance(node, ast.Import)
                           for alias in node.names if alias.name == "numpy"), None)

    def class_of(self, function: Located) -> str | None:
        owner = function.qualname.rpartition(".")[0]
        return owner if owner in self.classes else None

    def init_of(self, class_name: str) -> ast.FunctionDef | None:
        located = self.located.get(f"{class_name}.__init__")
        return located.node if located is not None else None   # type: ignore[return-value]

    def init_attributes(self, class_name: str) -> dict[str, ast.expr]:
        """``self.a = value`` of the class's ``__init__`` (tuple assignments too): a -> value."""
        init = self.init_of(class_name)
        if init is None or not init.args.args:
            return {}
        me, found = init.args.args[0].arg, {}
        for statement in ast.walk(init):
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    for attribute, value in _pairs(target, statement.value):
                        if _is_attribute_of(attribute, me) and attribute.attr not in found:
                            found[attribute.attr] = value
        return found

    def init_parameters(self, class_name: str) -> dict[str, ast.expr | None]:
        """The parameters of the class's ``__init__`` after self: name -> default (None: none)."""
        init = self.init_of(class_name)
        if init is None:
            return {}
        positional = init.args.posonlyargs + init.args.args
        defaults = [None] * (len(positional) - len(init.args.defaults)) + list(init.args.defaults)
        named = dict(zip((a.arg for a in positional), defaults))
        named.update(zip((a.arg for a in init.args.kwonlyargs), init.args.kw_defaults))
        named.pop(positional[0].arg if positional else "", None)
        return named


# --------------------------------------------------------------------------- counters and comparisons

def off_by_one_count(function: Located, module: Module) -> Iterator[Candidate]:
    """An integer in a comparison, arithmetic or an index one too high or too low."""
    for parent in walk_body(function):
        slots: list[ast.expr] = []
        if isinstance(parent, ast.Compare):
            slots = [parent.left, *parent.comparators]
        elif isinstance(parent, ast.BinOp):
            slots = [parent.left, parent.right]
        elif isinstance(parent, ast.Subscript):
            slots = [parent.slice]
        elif isinstance(parent, ast.AugAssign):
            slots = [parent.value]
        for slot in slots:
            value = _integer(slot)
            if value is not None:
                for changed in (value + 1, value - 1):
                    yield "off_by_one_count", [replace(slot, str(changed))]


def check_after_set(function: Located, module: Module) -> Iterator[Candidate]:
    """A flag or counter tested after the statement that sets it, instead of before (the first
    call already sees the second call's state)."""
    me = _self_name(function, module)
    if me is None:
        return
    for statements in blocks(function):
        for index, test in enumerate(statements):
            if not isinstance(test, (ast.If, ast.While, ast.Assert)):
                continue
            read = {node.attr for node in ast.walk(test.test) if _is_attribute_of(node, me)}
            setter = next((later for later in statements[index + 1:] if read & _attributes_set(later, me)), None)
            if setter is not None and module.lines.whole(test) and module.lines.whole(setter):
                moved = module.lines.before(test, module.lines.text(setter))
                yield "check_after_set", [module.lines.removal(setter), moved]


# --------------------------------------------------------------------------- state

def class_state(function: Located, module: Module) -> Iterator[Candidate]:
    """State kept on the class instead of the instance: ``self.a = v`` becomes ``type(self).a = v``,
    shared by every object (in ``__init__``, or for an attribute ``__init__`` does not set; not for an
    immutable constant, which the instance's own later assignments shadow)."""
    me, owner = _self_name(function, module), module.class_of(function)
    if me is None or owner is None:
        return
    in_init = function.qualname.endswith(".__init__")
    initialised = module.init_attributes(owner)
    for statement in walk_body(function):
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                for attribute in _flat(target):
                    immutable = isinstance(statement.value, ast.Constant) or (
                        isinstance(statement.value, ast.Tuple) and not statement.value.elts)
                    if _is_attribute_of(attribute, me) and (in_init or attribute.attr not in initialised) \
                            and not immutable:   # an immutable start value on the class reads the same
                        yield "class_state", [replace(attribute.value, f"type({me})")]


def not_reset(function: Located, module: Module) -> Iterator[Candidate]:
    """State that is not reset: an attribute set back to a fresh value (an empty list, None, a flag)
    outside ``__init__`` keeps its old value (one of a tuple assignment's resets dropped)."""
    if function.qualname.endswith(".__init__"):
        return
    for statements in blocks(function):
        for statement in statements:
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target, value = statement.targets[0], statement.value
            if isinstance(target, ast.Attribute) and _fresh(value):
                alone = len(statements) == 1 or not module.lines.whole(statement)
                yield "not_reset", [replace(statement, "pass") if alone else module.lines.removal(statement)]
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                for index, (name, item) in enumerate(zip(target.elts, value.elts)):
                    if isinstance(name, ast.Attribute) and _fresh(item):
                        targets = [ast.unparse(e) for i, e in enumerate(target.elts) if i != index]
                        values = [ast.unparse(e) for i, e in enumerate(value.elts) if i != index]
                        yield "not_reset", [replace(target, ", ".join(targets)), replace(value, ", ".join(values))]


def reset_at_exit(function: Located, module: Module) -> Iterator[Candidate]:
    """State reset too early: ``__exit__`` (the end of a ``with`` block) clears a container that
    ``__init__`` made, as if leaving the block ended the object's use."""
    owner, me = module.class_of(function), _self_name(function, module)
    if owner is None or me is None or not function.qualname.endswith(".__exit__"):
        return
    body = function.body
    if not body or not module.lines.whole(body[-1]):
        return
    indent = " " * body[0].col_offset
    for name, value in module.init_attributes(owner).items():
        if _fresh(value) and not isinstance(value, ast.Constant):
            yield "reset_at_exit", [module.lines.after(body[-1], f"{indent}{me}.{name} = {ast.unparse(value)}\n")]


def swap_statements(function: Located, module: Module) -> Iterator[Candidate]:
    """Two neighbouring statements in the wrong order (a reset before the read it should follow, a
    check after the update it guards); only where their order matters: one writes what the other
    reads or writes, or one may raise while the other changes state outside the function."""
    for statements in blocks(function):
        for first, second in zip(statements, statements[1:]):
            if any(isinstance(s, (ast.Return, ast.Raise, ast.Pass, ast.Continue, ast.Break)) for s in (first, second)):
                continue
            if _depend(first, second) and module.lines.whole(first) and module.lines.whole(second):
                moved = module.lines.before(first, module.lines.text(second))
                yield "swap_statements", [module.lines.removal(second), moved]


def done_twice(function: Located, module: Module) -> Iterator[Candidate]:
    """Work done twice: a call made for its effect (recording, registering, appending; not an
    idempotent ``add`` or ``update``) or an accumulation (``total = total + x``, ``n += 1``) repeated."""
    for statements in blocks(function):
        for statement in statements:
            effect = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and not (
                isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr in IDEMPOTENT)
            accumulates = isinstance(statement, ast.AugAssign) or (
                isinstance(statement, ast.Assign) and len(statement.targets) == 1 and any(
                    ast.dump(_stored(side)) == ast.dump(statement.targets[0])
                    for node in ast.walk(statement.value) if isinstance(node, ast.BinOp)
                    for side in (node.left, node.right)))
            if (effect or accumulates) and module.lines.whole(statement):
                yield "done_twice", [module.lines.after(statement, module.lines.text(statement))]


# --------------------------------------------------------------------------- copies

def alias(function: Located, module: Module) -> Iterator[Candidate]:
    """A mutable shared instead of copied: ``list(x)``, ``x.copy()``, ``copy.copy(x)``, ``x[:]`` become
    ``x``; ``np.array(x)`` becomes ``np.asarray(x)`` (a view)."""
    for node in walk_body(function):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in COPYING_CALLS and len(node.args) == 1 and not node.keywords:
                yield "alias", [replace(node, ast.unparse(node.args[0]))]
            elif isinstance(func, ast.Attribute) and func.attr == "copy" and not node.args and not node.keywords:
                yield "alias", [replace(node, ast.unparse(func.value))]
            elif _is_call_of(func, "copy", ("copy", "deepcopy")) and len(node.args) == 1:
                yield "alias", [replace(node, ast.unparse(node.args[0]))]
            elif module.numpy and _is_call_of(func, module.numpy, ("array",)) and node.args and \
                    _existing(node.args[0]):   # np.array of a fresh result copies nothing anyone holds
                yield "alias", [replace(func, f"{module.numpy}.asarray")]
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and \
                node.slice.lower is node.slice.upper is node.slice.step is None:
            yield "alias", [replace(node, ast.unparse(node.value))]


def copy_too_much(function: Located, module: Module) -> Iterator[Candidate]:
    """A new object that carries over too much: ``return C(...)`` in a method of ``C`` also copies
    an attribute that ``C(...)`` would have left at its start value (``copied.a = self.a``)."""
    owner, me = module.class_of(function), _self_name(function, module)
    if owner is None or me is None:
        return
    parameters = module.init_parameters(owner)
    for statement in own_returns(function):
        call = statement.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == owner):
            continue
        passed = set(list(parameters)[:len(call.args)]) | {k.arg for k in call.keywords}
        if not module.lines.whole(statement):
            continue
        for name, value in module.init_attributes(owner).items():
            if not {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & passed:
                yield "copy_too_much", [module.lines.with_statements(statement, f"copied = {ast.unparse(call)}\n"
                                                                               f"copied.{name} = {me}.{name}\n"
                                                                               "return copied")]


def copy_too_little(function: Located, module: Module) -> Iterator[Candidate]:
    """A new object made with too little: an argument of a module class's constructor that has a
    default left out (``C(data, flag=f)`` becomes ``C(data)``)."""
    for node in walk_body(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in module.classes:
            defaults = module.init_parameters(node.func.id)
            names = list(defaults)
            for index in range(len(node.args)):
                if index < len(names) and defaults[names[index]] is not None:
                    yield "copy_too_little", [replace(node, ast.unparse(_without_argument(node, index=index)))]
            for keyword in node.keywords:
                if keyword.arg is not None:
                    yield "copy_too_little", [replace(node, ast.unparse(_without_argument(node, keyword=keyword.arg)))]


# --------------------------------------------------------------------------- parameters and names

def parameter_ignored(function: Located, module: Module) -> Iterator[Candidate]:
    """A parameter ignored: a use of a parameter that has a default reads the default instead."""
    for name, default in _defaulted(function.node).items():
        for use in _uses(function.node, name):
            yield "parameter_ignored", [replace(use, ast.unparse(default))]


def wrong_name(function: Located, module: Module) -> Iterator[Candidate]:
    """A value read from the wrong name: a parameter (or the attribute ``__init__`` stored it in)
    used where another one of the same kind was meant."""
    defaulted = _defaulted(function.node)
    for name, default in defaulted.items():
        for other, other_default in defaulted.items():
            if other != name and _same_kind(default, other_default):
                for use in _uses(function.node, name):
                    yield "wrong_name", [replace(use, other)]
    owner, me = module.class_of(function), _self_name(function, module)
    if owner is None or me is None:
        return
    parameters = module.init_parameters(owner)
    stored: dict[str, ast.expr] = {}
    for attribute, value in module.init_attributes(owner).items():
        given = parameters.get(value.id) if isinstance(value, ast.Name) else None
        if given is not None:
            stored[attribute] = given
    for node in walk_body(function):
        if _is_attribute_of(node, me) and isinstance(node.ctx, ast.Load) and node.attr in stored:
            for other, other_default in stored.items():
                if other != node.attr and _same_kind(stored[node.attr], other_default):
                    yield "wrong_name", [replace(node, f"{me}.{other}")]


def container_type(function: Located, module: Module) -> Iterator[Candidate]:
    """A container of the wrong type: ``list(...)`` and ``tuple(...)`` exchanged, ``type(x)(...)``
    made a list or a tuple, a type dropped from ``isinstance(x, (A, B))``."""
    for node in walk_body(function):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in ("list", "tuple"):
            yield "container_type", [replace(func, "tuple" if func.id == "list" else "list")]
        elif isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "type":
            for kind in ("list", "tuple"):
                yield "container_type", [replace(func, kind)]
        elif isinstance(func, ast.Name) and func.id == "isinstance" and len(node.args) == 2 and \
                isinstance(node.args[1], ast.Tuple) and len(node.args[1].elts) >= 2:
            kinds = node.args[1].elts
            for index in range(len(kinds)):
                kept = [ast.unparse(k) for i, k in enumerate(kinds) if i != index]
                yield "container_type", [replace(node.args[1], kept[0] if len(kept) == 1 else f"({', '.join(kept)})")]


# --------------------------------------------------------------------------- order

def reversed_order(function: Located, module: Module) -> Iterator[Candidate]:
    """Order reversed: ``reversed(x)`` or ``x[::-1]`` walked forwards, a ``for`` loop over a list
    walked backwards (not a comprehension: ``any``, ``set`` and ``extend`` of one do not care)."""
    for node in walk_body(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reversed" \
                and len(node.args) == 1:
            yield "reversed_order", [replace(node, ast.unparse(node.args[0]))]
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and \
                _integer(node.slice.step) == -1 and node.slice.lower is node.slice.upper is None:
            yield "reversed_order", [replace(node, ast.unparse(node.value))]
        elif isinstance(node, ast.For) and isinstance(node.iter, (ast.Name, ast.Attribute)):
            yield "reversed_order", [replace(node.iter, f"reversed({ast.unparse(node.iter)})")]


def swap_operands(function: Located, module: Module) -> Iterator[Candidate]:
    """Operands in the wrong order: ``a - b`` as ``b - a`` (``/``, ``**``...), two neighbouring items
    of a tuple (returned gradients, a record's inputs) exchanged (not the types of an ``isinstance``,
    nor a tuple of start values)."""
    kinds = {id(call.args[1]) for call in walk_body(function) if isinstance(call, ast.Call) and
             isinstance(call.func, ast.Name) and call.func.id == "isinstance" and len(call.args) == 2}
    for node in walk_body(function):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ORDERED):
            swapped = ast.BinOp(node.right, node.op, node.left)
            yield "swap_operands", [replace(node, f"({ast.unparse(swapped)})")]
        elif isinstance(node, ast.Tuple) and isinstance(node.ctx, ast.Load) and len(node.elts) >= 2 and \
                id(node) not in kinds and not all(isinstance(e, ast.Constant) or _fresh(e) for e in node.elts) \
                and not any(isinstance(e, ast.Starred) for e in node.elts):
            for left, right in zip(node.elts, node.elts[1:]):
                if ast.dump(left) != ast.dump(right):
                    yield "swap_operands", [replace(left, ast.unparse(right)), replace(right, ast.unparse(left))]


# --------------------------------------------------------------------------- shapes and arithmetic

def shape_flatten(function: Located, module: Module) -> Iterator[Candidate]:
    """Shape lost: the array a module class (or ``np.array``) is made from is flattened first."""
    yield from _wrap_array_arguments(function, module, "shape_flatten", "ravel")


def shape_1d(function: Located, module: Module) -> Iterator[Candidate]:
    """Shape lost: the array a module class (or ``np.array``) is made from is made at least 1-d
    (a 0-d value becomes a 1-element vector)."""
    yield from _wrap_array_arguments(function, module, "shape_1d", "atleast_1d")


def sign_lost(function: Located, module: Module) -> Iterator[Candidate]:
    """A sign lost: ``-x`` becomes ``x``, ``a - b`` becomes ``a + b``."""
    for node in walk_body(function):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                not isinstance(node.operand, ast.Constant):
            yield "sign_lost", [replace(node, f"({ast.unparse(node.operand)})")]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            yield "sign_lost", [replace(node, f"({ast.unparse(ast.BinOp(node.left, ast.Add(), node.right))})")]


def factor_lost(function: Located, module: Module) -> Iterator[Candidate]:
    """A factor lost: ``a * b`` becomes ``a`` or ``b``, ``a / b`` becomes ``a``."""
    for node in walk_body(function):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            yield "factor_lost", [replace(node, f"({ast.unparse(node.left)})")]
            yield "factor_lost", [replace(node, f"({ast.unparse(node.right)})")]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            yield "factor_lost", [replace(node, f"({ast.unparse(node.left)})")]


SLIPS = (off_by_one_count, check_after_set, class_state, not_reset, reset_at_exit, swap_statements, done_twice,
         alias, copy_too_much, copy_too_little, parameter_ignored, wrong_name, container_type, reversed_order,
         swap_operands, shape_flatten, shape_1d, sign_lost, factor_lost)


# --------------------------------------------------------------------------- helpers

def walk_body(function: Located) -> Iterator[ast.AST]:
    """Every node of the function's statements (nested functions and lambdas included), not of its
    signature."""
    for statement in function.body:
        yield from ast.walk(statement)


def blocks(function: Located) -> Iterator[list[ast.stmt]]:
    """Every list of statements of the function (its body after the docstring, nested blocks)."""
    yield function.body
    for statement in function.body:
        for child in ast.walk(statement):
            for field in ("body", "orelse", "finalbody"):
                value = getattr(child, field, None)
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    yield without_docstring(value) if isinstance(child, (ast.FunctionDef, ast.ClassDef)) else value


def own_returns(function: Located) -> Iterator[ast.Return]:
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _self_name(function: Located, module: Module) -> str | None:
    """The first parameter of a method of a module class (``self``), else None."""
    args = function.node.args.posonlyargs + function.node.args.args
    if module.class_of(function) is None or not args or function.node.decorator_list:
        return None
    return args[0].arg


def _is_attribute_of(node: ast.AST | None, name: str) -> TypeGuard[ast.Attribute]:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name


def _attributes_set(statement: ast.stmt, me: str) -> set[str]:
    return {node.attr for node in ast.walk(statement)
            if _is_attribute_of(node, me) and isinstance(node.ctx, ast.Store)}


def _flat(target: ast.expr) -> list[ast.expr]:
    return [e for item in target.elts for e in _flat(item)] if isinstance(target, (ast.Tuple, ast.List)) else [target]


def _pairs(target: ast.expr, value: ast.expr) -> list[tuple[ast.expr, ast.expr]]:
    """(target, value) of an assignment, element by element for ``a, b = x, y``."""
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return list(zip(target.elts, value.elts))
    return [(target, value)]


def _fresh(value: ast.expr) -> bool:
    """A fresh start value: an empty container, None, a boolean, zero."""
    if isinstance(value, (ast.List, ast.Set, ast.Dict, ast.Tuple)):
        return not (value.keys if isinstance(value, ast.Dict) else value.elts)
    if isinstance(value, ast.Call):
        return isinstance(value.func, ast.Name) and value.func.id in FRESH_CALLS and not value.args
    return isinstance(value, ast.Constant) and (value.value is None or value.value in (0, "") or
                                                isinstance(value.value, bool))


def _integer(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _integer(node.operand)
        return -inner if inner is not None else None
    return None


def _is_call_of(func: ast.expr, module: str, names: tuple[str, ...]) -> bool:
    return isinstance(func, ast.Attribute) and func.attr in names and isinstance(func.value, ast.Name) \
        and func.value.id == module


def _stored(node: ast.AST) -> ast.AST:
    """``node`` as if stored to (so that a target and a read of the same place dump alike)."""
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
        node = copy.copy(node)
        node.ctx = ast.Store()
    return node


def _existing(node: ast.expr) -> bool:
    """An expression that names an object something else may hold (not a fresh result)."""
    if isinstance(node, ast.IfExp):
        return _existing(node.body) or _existing(node.orelse)
    return isinstance(node, (ast.Name, ast.Attribute, ast.Subscript))


def _depend(first: ast.stmt, second: ast.stmt) -> bool:
    """Whether two statements' order matters: one writes a place the other reads or writes, or one
    may raise while the other changes a place outside the function (an attribute, an item, by a
    method call)."""
    reads_1, writes_1 = _places(first)
    reads_2, writes_2 = _places(second)
    if writes_1 & (reads_2 | writes_2) or writes_2 & reads_1:
        return True
    outside_1, outside_2 = {w for w in writes_1 if "." in w or "[" in w}, {w for w in writes_2 if "." in w or "[" in w}
    return bool((_raises(first) and outside_2) or (_raises(second) and outside_1))


def _places(statement: ast.stmt) -> tuple[set[str], set[str]]:
    """The places (``x``, ``self.a``, ``d[k]``) a statement reads and writes, but inside the functions
    and lambdas it defines (those run later); a method call writes its receiver."""
    reads: set[str] = set()
    writes: set[str] = set()
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            writes.add(node.name)
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)):
            place = ast.unparse(node)
            (writes if isinstance(node.ctx, (ast.Store, ast.Del)) else reads).add(place)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            writes.add(ast.unparse(node.func.value))
        stack.extend(ast.iter_child_nodes(node))
    return reads, writes


def _raises(statement: ast.stmt) -> bool:
    return any(isinstance(node, ast.Raise) for node in ast.walk(statement))


def _defaulted(node: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, ast.expr]:
    positional = node.args.posonlyargs + node.args.args
    defaults = dict(zip((a.arg for a in positional[len(positional) - len(node.args.defaults):]), node.args.defaults))
    defaults.update((a.arg, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None)
    return defaults


def _uses(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> Iterator[ast.Name]:
    """The reads of ``name`` in the function's body, but where a nested function binds it again."""
    stack: list[ast.AST] = list(node.body)
    while stack:
        child = stack.pop()
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                name in {a.arg for a in child.args.posonlyargs + child.args.args + child.args.kwonlyargs}:
            continue
        if isinstance(child, ast.Name) and child.id == name and isinstance(child.ctx, ast.Load):
            yield child
        stack.extend(ast.iter_child_nodes(child))


def _same_kind(one: ast.expr, other: ast.expr) -> bool:
    return isinstance(one, ast.Constant) and isinstance(other, ast.Constant) and one.value is not None \
        and type(one.value) is type(other.value)


def _without_argument(call: ast.Call, index: int | None = None, keyword: str | None = None) -> ast.Call:
    return ast.Call(call.func, [a for i, a in enumerate(call.args) if i != index],
                    [k for k in call.keywords if keyword is None or k.arg != keyword])


def _wrap_array_arguments(function: Located, module: Module, operator: str, wrapper: str) -> Iterator[Candidate]:
    if module.numpy is None:
        return
    for node in walk_body(function):
        if isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred) and (
                (isinstance(node.func, ast.Name) and node.func.id in module.classes)
                or _is_call_of(node.func, module.numpy, ("array", "asarray"))):
            yield operator, [replace(node.args[0], f"{module.numpy}.{wrapper}({ast.unparse(node.args[0])})")]
