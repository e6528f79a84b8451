"""The provided code of a submission: what the handout gave the student, and what they changed of it.

A task names the student's functions (``functions: [Tensor.detach, stop_gradient]``); every other part
of the submission file is provided code. The handout's provided parts are kept as a fingerprint (a
digest of each part's syntax tree, ignoring comments, docstrings and formatting), in a file shipped
beside the spec (:data:`FINGERPRINT_FILE`), because in a student's folder the submission file *is* the
student's copy. In the trusted grader, :func:`changes` compares a submission with the fingerprint.

Parts: each top-level function (``stop_gradient``), each method (``Tensor.backward``), each class's own
statements (``Tensor`` class body: its attributes), and the module's other top-level statements
(imports, globals) as one part, ``module-level code``. Pure functions over source text.

A function's digest is known by its text too: the fingerprint keeps the SHA-256 of each provided
function's lines, so a submission whose function has the handout's very lines (most students leave
most of the engine alone) gets that function's digest without its syntax tree being dumped.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Iterable, Mapping

import grader.python_ast as python_ast
from grader.digests import sha256
from grader.records import record
from grader.results import MODULE_LEVEL, ProvidedChange

FINGERPRINT_FILE = "provided.json"
FORMAT = 1

# A function's digest by its text, for the next submission and the next save: a class's files (and
# a student's saves under --watch) repeat most of the handout's functions word for word, and
# dumping each one's syntax tree is most of what a comparison costs. The lines from a function's
# first decorator to its last line hold that function and nothing else (a def shares no line with
# another statement), so the same lines are the same tree. Kept by the lines' SHA-256 (not the
# text itself: a class's edited functions would pile up), cleared when full.
_FUNCTION_DIGESTS: dict[bytes, str] = {}
_FUNCTION_DIGESTS_LIMIT = 4096
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)?")  # the lines as the parser counts them (\f is not a break)
_HEX = re.compile(r"[0-9a-f]{64}")


@record
class Part:
    """A part of the provided engine in a module: where it is, and the digest of its syntax tree."""

    name: str         # "Tensor.backward", "Tensor" (its class body), "module-level code"
    first_line: int
    last_line: int
    digest: str
    text: str = ""    # a function's: the SHA-256 (hex) of its lines, from its first decorator to its end


def parts(source: str, student: tuple[str, ...] = (), known: Mapping[bytes, str] | None = None) -> dict[str, Part]:
    """The provided parts of ``source``: everything but the ``student`` functions (``known``: digests
    of functions by their lines' SHA-256, the handout's). Raises SyntaxError."""
    known = known or {}
    tree = python_ast.parse(source)
    lines = _LINE.findall(source)
    found: dict[str, Part] = {}
    loose: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name not in student:
                found[node.name] = _function_part(node.name, node, lines, known)
        elif isinstance(node, ast.ClassDef):
            body: list[ast.stmt] = []
            for child in node.body:
                qualified = f"{node.name}.{getattr(child, 'name', '')}"
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if qualified not in student:
                        found[qualified] = _function_part(qualified, child, lines, known)
                elif not _is_docstring(child):
                    body.append(child)
            found[node.name] = _class_part(node, body)
        elif not _is_docstring(node):
            loose.append(node)
    if loose:
        found[MODULE_LEVEL] = Part(MODULE_LEVEL, loose[0].lineno, loose[-1].end_lineno or loose[-1].lineno,
                                   _digest(loose))
    return found


def fingerprint(handout: str, student: tuple[str, ...]) -> str:
    """The fingerprint file's text for a handout whose task functions are ``student``."""
    provided = {name: {"digest": part.digest, "lines": [part.first_line, part.last_line],
                       **({"text": part.text} if part.text else {})}
                for name, part in parts(handout, student).items()}
    return json.dumps({"format": FORMAT, "student_functions": list(student), "parts": provided},
                      indent=2) + "\n"


HandoutPart = tuple[str, str, str]  # a provided part of the handout: its name, digest and text (or "")


def read_fingerprint(text: str) -> tuple[tuple[str, ...], tuple[HandoutPart, ...]]:
    """(student functions, each provided part) from a fingerprint file's text; ValueError when it
    is not one."""
    document = json.loads(text)
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"not a fingerprint of format {FORMAT}")
    student = document["student_functions"]
    provided = tuple((name, entry["digest"], entry.get("text", "")) for name, entry in document["parts"].items())
    if not all(isinstance(name, str) for name in student) or not all(
            isinstance(name, str) and isinstance(digest, str) and isinstance(key, str)
            and (key == "" or _HEX.fullmatch(key)) for name, digest, key in provided):
        raise ValueError("malformed fingerprint")
    return tuple(student), provided


def changes(submission: str, student: tuple[str, ...], handout: Iterable[HandoutPart]) -> tuple[ProvidedChange, ...]:
    """What the submission changed or removed of the handout's provided parts, in the handout's
    order. Parts the student added are theirs: not reported."""
    handout = tuple(handout)
    known = {bytes.fromhex(text): digest for _, digest, text in handout if text}
    try:
        mine = parts(submission, student, known)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()  # a file that does not parse is reported as such, not as a changed engine
    found = []
    for name, digest, _ in handout:
        part = mine.get(name)
        if part is None:
            found.append(ProvidedChange(name, "removed", None, None))
        elif part.digest != digest:
            found.append(ProvidedChange(name, "changed", part.first_line, part.last_line))
    return tuple(found)


SHOWN_CHANGES = 5  # parts of the provided engine named in a sentence; the others counted


def named(changes: tuple[ProvidedChange, ...], shown: int = SHOWN_CHANGES) -> str:
    """The changed parts in a sentence: "`Tensor.backward` (lines 190-215) and removed `_make`"."""
    names = []
    for change in changes[:shown]:
        if change.kind == "removed":
            names.append(f"removed `{change.name}`")
        elif change.where is not None:
            names.append(f"`{change.name}` ({change.where})")
        elif change.first_line == change.last_line:
            names.append(f"`{change.name}` (line {change.first_line})")
        else:
            names.append(f"`{change.name}` (lines {change.first_line}-{change.last_line})")
    more = len(changes) - len(names)
    if more:
        names.append(f"{more} more part{'s' * (more != 1)}")
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0] if names else ""


def may_be_the_cause(changes: tuple[ProvidedChange, ...]) -> str:
    """What a task scenario that did not pass says when the submission changed the provided code."""
    return (f"You changed the provided engine ({named(changes, 3)}): that change may be the cause; "
            "restore it from the handout to see.")


def _function_part(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str],
                   known: Mapping[bytes, str]) -> Part:
    """A function's part, its digest looked up by its text first (``known``, then _FUNCTION_DIGESTS)."""
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    last = node.end_lineno or node.lineno
    key = sha256("".join(lines[first - 1:last]).encode("utf-8", "surrogatepass")).digest()
    digest = known.get(key) or _FUNCTION_DIGESTS.get(key)
    if digest is None:
        digest = _digest([_without_docstring(node)])
        if len(_FUNCTION_DIGESTS) >= _FUNCTION_DIGESTS_LIMIT:
            _FUNCTION_DIGESTS.clear()
        _FUNCTION_DIGESTS[key] = digest
    return Part(name, node.lineno, last, digest, key.hex())


def _class_part(node: ast.ClassDef, body: list[ast.stmt]) -> Part:
    """A class's own statements (its name, bases, keywords, decorators and non-method body): each
    method is a part of its own."""
    normal = [ast.Name(id=node.name), *node.bases, *node.keywords, *node.decorator_list, *body]
    return Part(node.name, node.lineno, node.end_lineno or node.lineno, _digest(normal))


def _without_docstring(node: ast.AST) -> ast.AST:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and _is_docstring(body[0]):
        clone = copy.copy(node)  # shallow: only its body differs, and the tree stays untouched
        clone.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
        return clone
    return node


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _digest(nodes: list) -> str:
    # The dump without positions: the same code in another layout, or with other comments, is equal.
    text = "\n".join(ast.dump(node, annotate_fields=True, include_attributes=False) for node in nodes)
    return sha256(text.encode()).hexdigest()[:32]
