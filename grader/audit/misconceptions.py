"""The misconceptions an assignment's scenarios can name, read from the scenario files' text. Pure.

A check names a misconception as a key of ``wrong={...}`` (or ``misconception=`` of ``expect``),
written either as a sentence or as a module constant holding one (``FLOWED_THROUGH_DETACH = "..."``);
a constant the file reads anywhere (a helper that picks one of several, say) counts as one it can name.
A named mutant may give its misconception either way: the constant's name (its *key*) or the sentence.
"""

from __future__ import annotations

import ast
import re
from dataclasses import field

import grader.python_ast as python_ast
from grader.records import record

KEY = re.compile(r"^[A-Z][A-Z0-9_]*$")


@record
class Misconceptions:
    keys: dict[str, frozenset[str]] = field(default_factory=dict)   # constant name -> its sentence(s)
    used: frozenset[str] = frozenset()                              # sentences some check can name

    def key_of(self) -> dict[str, str]:
        """Each sentence a single constant holds: the constant's name (a short label for it)."""
        return {next(iter(sentences)): key for key, sentences in sorted(self.keys.items()) if len(sentences) == 1}

    def resolve(self, given: str) -> str:
        """The sentence ``given`` stands for. Raises ValueError (with the reason) for a key that no
        scenario file defines, or one defined differently in two files."""
        if given in self.keys:
            sentences = self.keys[given]
            if len(sentences) > 1:
                raise ValueError(f"{given} holds different sentences in different scenario files")
            return next(iter(sentences))
        if KEY.match(given):
            from grader.spec_yaml import did_you_mean
            raise ValueError(f"no scenario file defines {given}{did_you_mean(given, self.keys)}")
        return given


def collect(files: dict[str, str]) -> Misconceptions:
    """The misconceptions of scenario files, given as ``{file name: text}``."""
    keys: dict[str, set[str]] = {}
    used: set[str] = set()
    for name, text in files.items():
        tree = python_ast.parse(text, filename=name)
        constants = _string_constants(tree)
        for key, sentence in constants.items():
            keys.setdefault(key, set()).add(sentence)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in constants:
                used.add(constants[node.id])   # read by a check (a wrong= key, a default, a helper's choice)
            if not isinstance(node, ast.keyword):
                continue
            if node.arg == "wrong" and isinstance(node.value, ast.Dict):
                used.update(s for s in (_sentence(k, constants) for k in node.value.keys) if s)
            elif node.arg == "misconception":
                named = _sentence(node.value, constants)
                if named:
                    used.add(named)
    return Misconceptions({k: frozenset(v) for k, v in keys.items()}, frozenset(used))


def _string_constants(tree: ast.Module) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and KEY.match(node.targets[0].id):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, str):
                found[node.targets[0].id] = value
    return found


def _sentence(node: ast.AST | None, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None
