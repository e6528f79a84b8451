"""``@record`` behaves as ``@dataclass(frozen=True)`` does: each class declared both ways, compared."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import FrozenInstanceError, field

import pytest

from grader.records import record


def both(body: str, *, slots: bool = False) -> tuple[type, type]:
    """The class of ``body`` declared as a record and as a frozen dataclass (each a global of this
    module, under a name of its own, so that pickle finds it; both show as ``Point``)."""
    made = []
    frozen = dataclasses.dataclass(frozen=True, slots=slots)
    for kind, decorator in (("record", record(slots=slots)), ("dataclass", frozen)):
        namespace: dict = {"field": field}
        exec(f"class Point:\n{body}", namespace)
        cls = namespace["Point"]
        cls.__module__ = __name__
        made.append(decorator(cls))
        name = f"Point_{kind}_{len(_DECLARED)}"
        _DECLARED.append(name)
        globals()[name] = made[-1]
        made[-1].__qualname__ = name
    return made[0], made[1]


_DECLARED: list[str] = []


PLAIN = """
    x: int
    y: float = 1.5
    tags: tuple = ()
    seen: list = field(default_factory=list, compare=False, repr=False)
    note: str = field(default="n", kw_only=True)
    cached: dict = field(default_factory=dict, init=False, compare=False)
"""


@pytest.mark.parametrize("slots", [False, True])
def test_a_record_is_made_and_compared_as_a_frozen_dataclass_is(slots):
    mine, theirs = both(PLAIN, slots=slots)
    for args, kwargs in [((1,), {}), ((1, 2.0, ("a",)), {"note": "m"}), ((), {"x": 3, "seen": [1]})]:
        a, b = mine(*args, **kwargs), theirs(*args, **kwargs)
        assert [getattr(a, f.name) for f in dataclasses.fields(a)] == \
               [getattr(b, f.name) for f in dataclasses.fields(b)]
        assert repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
        assert (a == mine(*args, **kwargs)) and not (a != mine(*args, **kwargs))
        assert hash(a) == hash(mine(*args, **kwargs))
        assert dataclasses.replace(a, x=9) == mine(**{**kwargs, **dict(zip(["x", "y", "tags"], args)), "x": 9})
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert copy.deepcopy(a) == a and pickle.loads(pickle.dumps(a)) == a
    assert mine.__match_args__ == theirs.__match_args__
    assert str(inspect.signature(mine)) == str(inspect.signature(theirs))
    a = mine(1)
    assert a.seen == [] and a.seen is not mine(1).seen and a.cached == {}
    assert mine(1, seen=[1]) == mine(1, seen=[2]), "compare=False fields are not compared"
    assert mine(1) != mine(2) and mine(1) != theirs(1) and (mine(1) == (1,)) is False
    for args, kwargs in [((), {}), ((1, 2.0, (), [], "kw_only given by position"), {}), ((1,), {"nope": 2}),
                         ((1,), {"cached": {}}), ((1,), {"x": 1})]:
        for made in (mine, theirs):
            with pytest.raises(TypeError):
                made(*args, **kwargs)


def test_a_record_is_frozen_in_every_attribute():
    mine, _ = both(PLAIN)
    value = mine(1)
    for attempt in (lambda: setattr(value, "x", 2), lambda: setattr(value, "other", 2), lambda: delattr(value, "x")):
        with pytest.raises(FrozenInstanceError):
            attempt()
    assert value.x == 1


def test_a_one_field_record_compares_its_field_as_a_tuple_does():
    mine, theirs = both("    value: float\n")
    nan = float("nan")
    assert mine(nan) == mine(nan) and theirs(nan) == theirs(nan), "the same object equals itself in a tuple"
    assert mine(1.0) == mine(1) and mine(1.0) != mine(2.0)
    empty, _ = both("    pass\n")
    assert empty() == empty() and hash(empty()) == hash(empty()) and repr(empty()).endswith("()")


def test_inheritance_post_init_and_recursion_are_a_dataclasses():
    @record
    class Base:
        a: int
        b: int = 2

    @record
    class Derived(Base):
        c: int = 3
        total: int = field(init=False, default=0)

        def __post_init__(self):
            object.__setattr__(self, "total", self.a + self.b + self.c)

    value = Derived(1, c=4)
    assert (value.a, value.b, value.c, value.total) == (1, 2, 4, 7)
    assert repr(value).endswith(".<locals>.Derived(a=1, b=2, c=4, total=7)")
    assert value != Base(1, 2) and dataclasses.fields(value)[-1].name == "total"

    @record
    class Node:
        children: list

    node = Node([])
    node.children.append(node)
    assert repr(node).endswith("Node(children=[...])")


def test_what_the_class_writes_itself_it_keeps_as_a_dataclass_does():
    @record
    class Shown:
        a: int

        def __repr__(self):
            return "shown"

    @record
    class Same:
        a: int

        def __eq__(self, other):
            return True

    assert repr(Shown(1)) == "shown" and Shown(1) == Shown(1) and Shown(1) != Shown(2)
    assert Same(1) == Same(2) and hash(Same(1)) == hash(Same(1)) and hash(Same(1)) != hash(Same(2))
    with pytest.raises(TypeError, match="__setattr__"):
        @record
        class Mutable:
            a: int

            def __setattr__(self, name, value):
                pass
    with pytest.raises(TypeError, match="non-default argument"):
        @record
        class Order:
            a: int = 1
            b: int  # type: ignore[misc]
