"""The named mutants of an assignment (``solutions/<id>/mutants.yaml``) and their edits. Pure.

::

    assignment: autodiff
    mutants:
      - id: detach_returns_self
        task: detach
        misconception: FLOWED_THROUGH_DETACH    # a scenario constant's name, a sentence, or a list
        function: Tensor.detach                 # with body: the statements after its docstring
        body: |
          return self
      - id: engine_assign_not_accumulate
        task: engine
        misconception: null                     # no scenario names this one (yet)
        replace:                                # each `old` must occur exactly once
          - old: "grads[x] = grads[x] + gx if x in grads else gx"
            new: "grads[x] = gx"
        may_cost: [detach, tape]                # other tasks it may cost points in, declared
      - id: detach_impostor
        task: detach
        lie: true                               # it must earn no points of its task
        function: Tensor.detach
        body: ...
    equivalent:                                 # automatic mutants that behave as the reference
      - {id: "GradientTape._take_records_for_call/negate_condition/b25285", reason: "..."}

With ``function`` and ``replace`` together, each ``old`` must occur exactly once inside that function.
Every problem is a :class:`~grader.errors.SpecError` (``file:line: field: message``): an edit that no
longer applies to the reference is an error, never a mutant silently skipped.
"""

from __future__ import annotations

import re
import textwrap

import grader.python_ast as python_ast
from grader.audit.functions import functions, normal_module, with_body
from grader.audit.misconceptions import Misconceptions
from grader.audit.mutant import Kind, Mutant
from grader.errors import SpecError
from grader.records import record
from grader.spec_yaml import Field, Fields, MarkedDict, MarkedList, did_you_mean, parse

MUTANTS_FILE = "mutants.yaml"
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")

TOP_FIELDS = {
    "assignment": Field((str,), True, describe="the id of the assignment these mutants belong to"),
    "mutants": Field((list,), describe="a list of mutants, each with id, task and an edit"),
    "equivalent": Field((list,), describe="a list of automatic mutants to exclude, each with id and reason"),
}
MUTANT_FIELDS = {
    "id": Field((str,), True, describe="a short identifier (letters, digits, _ . -)"),
    "task": Field((str,), True, describe="the id of the task whose code the mutant changes"),
    "misconception": Field((str, list, type(None)),
                           describe="a scenario constant's name, a sentence, a list of them, or null"),
    "description": Field((str,), describe="one line saying what the mutant does wrong"),
    "function": Field((str,), describe="the name of a function of the reference (name or Class.method)"),
    "body": Field((str,), describe="the function's new body (the statements after its docstring)"),
    "replace": Field((list, dict), describe="a list of {old, new} textual replacements"),
    "may_cost": Field((list,), describe="a list of other task ids this mutant may cost points in"),
    "lie": Field((bool,), describe="true for a lie (an impostor, a hard-coded answer): it must earn no points of its "
                                   "task"),
}
REPLACE_FIELDS = {
    "old": Field((str,), True, describe="text of the reference that occurs exactly once"),
    "new": Field((str,), True, describe="the text that replaces it"),
}
EQUIVALENT_FIELDS = {
    "id": Field((str,), True, describe="the id of an automatic mutant, as the audit reports it"),
    "reason": Field((str,), True, describe="why it behaves exactly as the reference"),
}


@record
class Exclusion:
    id: str
    reason: str
    line: int


@record
class MutantsFile:
    path: str
    named: tuple[Mutant, ...]
    excluded: tuple[Exclusion, ...]


def read_mutants(text: str, path: str, reference: str, reference_name: str, assignment_id: str,
                 task_ids: list[str], misconceptions: Misconceptions) -> MutantsFile:
    """Parse a mutants file and apply each edit to ``reference`` (the text of ``reference_name``)."""
    checker = Fields(path)
    document = parse(text, path)
    top = checker.read(document, TOP_FIELDS)
    if top["assignment"] is not None and top["assignment"] != assignment_id:
        checker.problem(document.lines["assignment"], "assignment",
                        f"is {top['assignment']!r} but the assignment is {assignment_id!r}")
    located = functions(python_ast.parse(reference))
    context = _Context(checker, reference, reference_name, task_ids, misconceptions, located)
    named: list[Mutant] = []
    seen: dict[str, int] = {}
    forms = {normal_module(python_ast.parse(reference)): "the reference"}
    raw = top["mutants"] or MarkedList()
    for index, item in enumerate(raw):
        mutant = context.mutant(item, f"mutants[{index}]", raw.lines[index])
        if mutant is None:
            continue
        line = item.lines.get("id", raw.lines[index])
        if mutant.id in seen:
            checker.problem(line, f"mutants[{index}].id",
                            f"{mutant.id!r} is used twice (first on line {seen[mutant.id]})")
            continue
        seen[mutant.id] = line
        form = normal_module(python_ast.parse(mutant.source))
        if form in forms:
            same = forms[form]
            checker.problem(line, f"mutants[{index}]", "the edit changes nothing the grader can see (only comments "
                            "or formatting)" if same == "the reference" else f"the same code as mutant {same!r}")
            continue
        forms[form] = mutant.id
        named.append(mutant)
    excluded = []
    raw = top["equivalent"] or MarkedList()
    for index, item in enumerate(raw):
        values = checker.read(item, EQUIVALENT_FIELDS, f"equivalent[{index}]", raw.lines[index])
        if values["id"] is not None:
            excluded.append(Exclusion(values["id"], values["reason"] or "", item.lines.get("id", raw.lines[index])))
    checker.raise_if_any()
    return MutantsFile(path, tuple(named), tuple(excluded))


def check_exclusions(mutants_file: MutantsFile, automatic_ids: list[str]) -> None:
    """Every excluded id must name an automatic mutant: a stale exclusion is an error."""
    problems = []
    for index, exclusion in enumerate(mutants_file.excluded):
        if exclusion.id not in automatic_ids:
            function = exclusion.id.split("/")[0]
            same_function = [i for i in automatic_ids if i.split("/")[0] == function and
                             i.split("/")[1:2] == exclusion.id.split("/")[1:2]]
            hint = (f"; the function's code changed since it was excluded? its mutants of that kind now: "
                    f"{', '.join(same_function)}" if same_function else did_you_mean(exclusion.id, automatic_ids))
            problems.append(SpecError(mutants_file.path, exclusion.line, f"equivalent[{index}].id",
                                      f"no automatic mutant {exclusion.id!r}{hint}"))
    if problems:
        from grader.spec_yaml import SpecErrors
        raise SpecErrors(problems)


class _Context:
    def __init__(self, checker: Fields, reference: str, reference_name: str, task_ids: list[str],
                 misconceptions: Misconceptions, located):
        self.checker, self.reference, self.reference_name = checker, reference, reference_name
        self.task_ids, self.misconceptions, self.located = task_ids, misconceptions, located

    def mutant(self, item, where: str, line: int) -> Mutant | None:
        values = self.checker.read(item, MUTANT_FIELDS, where, line)
        if not isinstance(item, MarkedDict) or values["id"] is None:
            return None
        lines = item.lines
        problems = len(self.checker.problems)
        if not _ID.match(values["id"]):
            self.checker.problem(lines["id"], f"{where}.id", "must be letters, digits, _ . or -")
        task = values["task"]
        if task is not None and task not in self.task_ids:
            self.checker.problem(lines["task"], f"{where}.task", f"unknown task {task!r}"
                                 f"{did_you_mean(task, self.task_ids)}; tasks: {', '.join(self.task_ids)}")
        may_cost = tuple(values["may_cost"] or ())
        for index, other in enumerate(may_cost):
            if other not in self.task_ids or other == task:
                hint = did_you_mean(str(other), self.task_ids)
                self.checker.problem(lines["may_cost"], f"{where}.may_cost[{index}]",
                                     f"must be another task's id, got {other!r}{hint}")
        sentences = self._misconceptions(values["misconception"], where, lines)
        source = self._edited(values, where, lines, line)
        if source is None or len(self.checker.problems) > problems:
            return None
        description = values["description"] or _default_description(values)
        return Mutant(id=values["id"], kind=Kind.NAMED, task=task, source=source, description=description,
                      misconceptions=sentences, function=values["function"], may_cost=may_cost,
                      lie=bool(values["lie"]))

    def _misconceptions(self, given, where: str, lines: dict) -> tuple[str, ...]:
        items = given if isinstance(given, list) else [] if given is None else [given]
        sentences = []
        for index, item in enumerate(items):
            field = f"{where}.misconception" + (f"[{index}]" if isinstance(given, list) else "")
            if not isinstance(item, str):
                self.checker.problem(lines["misconception"], field, f"must be text, got {item!r}")
                continue
            try:
                sentences.append(self.misconceptions.resolve(item.strip()))
            except ValueError as error:
                self.checker.problem(lines["misconception"], field, str(error))
        return tuple(sentences)

    def _edited(self, values: dict, where: str, lines: dict, line: int) -> str | None:
        function, body, replace = values["function"], values["body"], values["replace"]
        if function is not None and function not in self.located:
            self.checker.problem(lines["function"], f"{where}.function", f"{function!r} is not a function of "
                                 f"{self.reference_name}{did_you_mean(function, self.located)}")
            return None
        if (body is None) == (replace is None):
            self.checker.problem(line, where, "needs exactly one edit: body (with function) or replace")
            return None
        if body is not None:
            if function is None:
                self.checker.problem(lines["body"], f"{where}.body", "needs function: the function whose body it is")
                return None
            source = with_body(self.reference, self.located[function], body)
        else:
            replaced = self._replaced(replace, function, where, lines)
            if replaced is None:
                return None
            source = replaced
        try:
            python_ast.parse(source)
        except SyntaxError as error:
            self.checker.problem(lines.get("body", lines.get("replace", line)), where,
                                 f"the edited {self.reference_name} does not parse: line {error.lineno}: {error.msg}")
            return None
        return source

    def _replaced(self, replace, function: str | None, where: str, lines: dict) -> str | None:
        items = replace if isinstance(replace, list) else [replace]
        text = self.reference
        begin, end = 0, len(text)
        if function is not None:   # within the function's text, which the replacements shift
            located = self.located[function]
            begin, end = _offsets(text, located.first_line, located.last_line)
        for index, item in enumerate(items):
            field = f"{where}.replace" + (f"[{index}]" if isinstance(replace, list) else "")
            item_line = replace.lines[index] if isinstance(replace, MarkedList) else lines["replace"]
            values = self.checker.read(item, REPLACE_FIELDS, field, item_line)
            old, new = values["old"], values["new"]
            if old is None or new is None:
                return None
            count = text.count(old, begin, end)
            if count != 1:
                scope = f"function {function} of {self.reference_name}" if function else self.reference_name
                self.checker.problem(item.lines.get("old", item_line) if isinstance(item, MarkedDict) else item_line,
                                     f"{field}.old", f"occurs {count} times in {scope}, must occur exactly once"
                                     + (_closest(old, text[begin:end]) if count == 0 else "; make it longer"))
                return None
            at = text.index(old, begin, end)
            text = text[:at] + new + text[at + len(old):]
            end += len(new) - len(old)
        return text


def _offsets(text: str, first_line: int, last_line: int) -> tuple[int, int]:
    lines = text.splitlines(keepends=True)
    begin = sum(len(line) for line in lines[:first_line - 1])
    return begin, begin + sum(len(line) for line in lines[first_line - 1:last_line])


def _closest(old: str, text: str) -> str:
    """A hint for an `old` that matches nothing: the line of the text most like its first line."""
    import difflib
    first = old.strip().splitlines()[0].strip() if old.strip() else ""
    candidates = [line.strip() for line in text.splitlines() if line.strip()]
    close = difflib.get_close_matches(first, candidates, n=1, cutoff=0.6)
    hint = f"; the closest line is {close[0]!r}" if close else ""
    return f" (the reference changed? update the mutant{hint})"


def _default_description(values: dict) -> str:
    if values["body"] is not None:
        first = textwrap.dedent(values["body"]).strip().splitlines()[0]
        return f"{values['function']} does: {first}"
    return f"edits {values['function'] or 'the reference'}"
