"""YAML that remembers where each value came from, and field checks that say where a value is wrong.

``parse`` reads YAML with pyyaml's safe loader into :class:`Node`-annotated dicts and lists
(``.line`` of the mapping, ``.lines[key]`` of each key), so that every error names the file,
the line and the field. :class:`Fields` checks one mapping against a declared set of fields and
collects problems instead of stopping at the first.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from grader.errors import SpecError
from grader.records import record


class MarkedDict(dict):
    """A mapping from YAML with the line of the mapping and of each of its keys."""

    line: int = 0
    lines: dict


class MarkedList(list):
    """A sequence from YAML with its own line and the line of each item."""

    line: int = 0
    lines: list


def _construct_mapping(loader, node) -> MarkedDict:
    loader.flatten_mapping(node)
    result = MarkedDict()
    result.line, result.lines = node.start_mark.line + 1, {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str):
            raise SpecError(loader.name, line, str(key), "keys must be text")
        if key in result:
            raise SpecError(loader.name, line, key, f"appears twice (first on line {result.lines[key]})")
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[key] = line
    return result


def _construct_sequence(loader, node) -> MarkedList:
    result = MarkedList(loader.construct_object(child, deep=True) for child in node.value)
    result.line, result.lines = node.start_mark.line + 1, [child.start_mark.line + 1 for child in node.value]
    return result


@functools.cache
def _loader():
    """pyyaml's safe loader with our constructors. pyyaml is imported on the first parse, not with
    this module: a spec the loading edge finds in its cache needs none (see grader.loading)."""
    import yaml

    # libyaml's parser when pyyaml has it (several times faster); the constructors above are ours.
    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
        pass

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
    return yaml, Loader


def parse(text: str, filename: str) -> MarkedDict:
    """Parse a spec file's text; the document must be a mapping. Raises :class:`SpecError`."""
    yaml, loader_class = _loader()
    loader = loader_class(text)
    loader.name = filename
    try:
        document = loader.get_single_data()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark else None
        raise SpecError(filename, line, None, f"not valid YAML: {error.problem or error}") from None
    except yaml.YAMLError as error:
        raise SpecError(filename, None, None, f"not valid YAML: {error}") from None
    finally:
        loader.dispose()
    if not isinstance(document, MarkedDict):
        raise SpecError(filename, 1, None, "the file must hold a mapping of fields (key: value)")
    return document


@record
class Field:
    """One allowed field: its type(s), whether it is required, its default, a description, and a
    ``check`` of a value of the right type (a problem to report, or None)."""

    types: tuple[type, ...]
    required: bool = False
    default: Any = None
    describe: str = ""
    check: Callable[[Any], str | None] | None = None


def did_you_mean(name: str, choices) -> str:
    import difflib  # only when something is misspelt
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Fields:
    """Checks mappings against declared fields, collecting every problem as a :class:`SpecError`."""

    def __init__(self, filename: str):
        self.filename = filename
        self.problems: list[SpecError] = []

    def problem(self, line: int | None, field: str | None, message: str) -> None:
        self.problems.append(SpecError(self.filename, line, field, message))

    def read(self, mapping: Any, fields: dict[str, Field], where: str = "", line: int | None = None) -> dict:
        """The values of ``fields`` in ``mapping`` (defaults filled in); wrong ones become problems."""
        prefix = f"{where}." if where else ""
        if not isinstance(mapping, MarkedDict):
            self.problem(line, where or None, "must be a mapping of fields (key: value)")
            return {name: spec.default for name, spec in fields.items()}
        values = {}
        for key in mapping:
            if key not in fields:
                self.problem(mapping.lines[key], prefix + key, f"unknown field{did_you_mean(key, fields)}")
        for name, spec in fields.items():
            if name not in mapping:
                if spec.required:
                    self.problem(mapping.line, prefix + name, f"missing (required: {spec.describe})")
                values[name] = spec.default
                continue
            value = mapping[name]
            # bool is an int in Python; a YAML 'yes' must not pass for a number of points.
            if not isinstance(value, spec.types) or (isinstance(value, bool) and bool not in spec.types):
                got = "nothing" if value is None else f"{type(value).__name__} {value!r}"
                self.problem(mapping.lines[name], prefix + name, f"must be {spec.describe}, got {got}")
                values[name] = spec.default
            elif spec.check is not None and spec.check(value) is not None:
                self.problem(mapping.lines[name], prefix + name, f"{spec.check(value)}, got {value!r}")
                values[name] = spec.default
            else:
                values[name] = value
        return values

    def raise_if_any(self) -> None:
        if self.problems:
            raise SpecErrors(self.problems)


class SpecErrors(SpecError):
    """Several spec problems at once; ``str()`` gives one line per problem."""

    def __init__(self, problems: list[SpecError]):
        first = problems[0]
        super().__init__(first.file, first.line, first.field, first.message)
        self.problems = problems
        self.args = ("\n".join(str(p) for p in problems),)

    def __str__(self) -> str:
        return self.args[0]
