"""nbformat's JSON schema, checked without importing nbformat on the way to the sandbox.

A notebook is validated against the schema nbformat ships for its version (``nbformat.v4.N.schema.json``,
the latest one for a minor version it does not know, as nbformat picks), by fastjsonschema: the
validator nbformat itself uses under ``NBFORMAT_VALIDATOR=fastjsonschema``. Importing nbformat
costs more than a whole ``grader check`` may add for a notebook (its default validator, jsonschema,
and traitlets: see benchmarks/README.md); the schema files are read from its install without
importing it. fastjsonschema turns a schema into Python code; that code is compiled once and its
bytecode kept in the grader's cache folder (:mod:`grader.spec_cache`, where the grader trusts it),
keyed by the schema's text, fastjsonschema's version and Python's bytecode format, so a check only loads it, with
fastjsonschema's two exception classes from its ``exceptions.py`` alone (importing the package
costs as much again).

tests/test_notebook_schema.py keeps this honest: on valid and broken notebooks, nbformat's own
``validate`` and this one agree.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from grader.errors import UsageError

if TYPE_CHECKING:
    from grader.spec_cache import SpecCache



def _install() -> str:
    """The command that installs the notebook extra where this grader runs (an error path only)."""
    from grader.distribution import install_command
    return install_command("notebook")


def schema_problem(notebook: dict, cache: SpecCache | None = None) -> str | None:
    """Where and why ``notebook`` (version 4, parsed JSON) breaks nbformat's schema
    (``notebook.cells[1].execution_count must be integer or null``); None when it does not.

    ``cache``: where the grader may keep the compiled validator, a folder no submission can have
    written (:func:`grader.checking.trusted_cache`). Without one, nbformat's own ``validate`` checks
    (importing nbformat: ``grade`` pays it once for a class, a check where the cache is not trusted
    each time): bytecode from a folder a submission could write would run in the grader."""
    if cache is None:
        return _nbformat_problem(notebook)
    validate = _validator(_minor(notebook), cache)
    try:
        validate(notebook)
    except _exception() as error:
        return _described(error, notebook, cache)
    except (RecursionError, ValueError, TypeError) as error:
        return f"its JSON cannot be checked: {error}"
    return None


def _exception() -> type[Exception]:
    found: type[Exception] = _exceptions().JsonSchemaException
    return found


def _minor(notebook: dict) -> int:
    minor = notebook.get("nbformat_minor")
    return minor if isinstance(minor, int) else -1


def _described(error, notebook: dict, cache: SpecCache) -> str:
    """``notebook.cells[3].source must be ...``; for a cell that matches none of the cell schemas (the
    validator's one-of rule says only that), which kind of cell it claims to be."""
    where = str(getattr(error, "name", "") or "data").replace("data", "notebook", 1)
    message = str(error.message or error).replace("data", "notebook", 1)
    path = [p for p in getattr(error, "path", [])[1:]]
    if getattr(error, "rule", None) == "oneOf" and len(path) == 2 and path[0] == "cells":
        try:
            kind = notebook["cells"][int(path[1])].get("cell_type")
        except (ValueError, IndexError, AttributeError, KeyError, TypeError):
            kind = None
        if kind not in ("code", "markdown", "raw"):
            return f"{where}: its cell_type is {kind!r}, not code, markdown or raw"
        try:
            _validator(_minor(notebook), cache, f"{kind}_cell")(notebook["cells"][int(path[1])])
        except _exception() as precise:  # the cell against its own kind's schema: what is wrong
            return str(getattr(precise, "message", None) or precise).replace("data", where, 1)
        message = f"{where}: this {kind} cell does not match nbformat's schema"
    return message


def _nbformat_problem(notebook: dict) -> str | None:
    """nbformat's own validation (its default validator), with the same wording as ours."""
    try:
        import nbformat
    except ImportError:
        raise UsageError(f"reading a notebook needs nbformat, which is not installed: {_install()}") from None
    import copy
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a repaired duplicate cell id: nbformat's concern, not the student's
        try:
            nbformat.validate(copy.deepcopy(notebook))  # it may repair the dict it is given
        except nbformat.ValidationError as error:
            path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            return f"notebook{path}: {error.message}"
    return None


@functools.cache
def _validator(minor: int, cache: SpecCache, definition: str | None = None) -> Callable[[dict], object]:
    """The validator of nbformat 4.``minor``'s schema, or of one of its definitions (a cell kind)."""
    schema = _schema_file(minor)
    text = schema.read_text(encoding="utf-8")
    if definition is not None:
        import json
        text = json.dumps({**json.loads(text), "$ref": f"#/definitions/{definition}"})
    stamp = f"fastjsonschema-{_package_file('fastjsonschema', 'version.py').read_text()!r}:" \
            f"{importlib.util.MAGIC_NUMBER.hex()}"
    code = cache.code("nbschema", text, stamp, lambda: _generate(text, schema.name))
    exceptions = _exceptions()
    namespace = {"JsonSchemaValueException": exceptions.JsonSchemaValueException,
                 "JsonSchemaValuesException": exceptions.JsonSchemaValuesException}
    exec(code, namespace)  # fastjsonschema's generated validator for nbformat's own schema
    return namespace["validate"]


def _generate(text: str, name: str):
    """fastjsonschema's validator code for the schema ``text``, compiled, with the import of its two
    exception classes taken out: the namespace it runs in holds them (see :func:`_exceptions`)."""
    import json

    import fastjsonschema
    source = fastjsonschema.compile_to_code(json.loads(text))
    if _EXCEPTIONS_IMPORT not in source:  # another fastjsonschema's layout: keep its own import
        raise UsageError(f"this fastjsonschema ({fastjsonschema.VERSION}) writes validators the grader does not "
                         f"know; install the version this brings: {_install()}")
    return compile(source.replace(_EXCEPTIONS_IMPORT, ""), f"<nbformat schema {name}>", "exec")


_EXCEPTIONS_IMPORT = "from fastjsonschema import JsonSchemaValueException, JsonSchemaValuesException\n"


@functools.cache
def _exceptions():
    """fastjsonschema's exception classes, from its exceptions.py alone: importing the package
    (all its drafts and its URL resolver) costs more than the rest of reading a notebook."""
    file = _package_file("fastjsonschema", "exceptions.py")
    spec = importlib.util.spec_from_file_location("grader._fastjsonschema_exceptions", file)
    if spec is None or spec.loader is None:
        raise UsageError(f"fastjsonschema's {file} cannot be loaded: reinstall it: {_install()}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _package_file(package: str, name: str) -> Path:
    """A file of an installed package, found without importing the package."""
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise UsageError(f"reading a notebook needs {package}, which is not installed: {_install()}")
    return Path(list(found.submodule_search_locations)[0]) / name


def _schema_file(minor: int) -> Path:
    """nbformat's schema file for version 4.``minor``, found without importing nbformat."""
    folder = _package_file("nbformat", "v4")
    exact = folder / f"nbformat.v4.{minor}.schema.json"
    return exact if minor >= 0 and exact.is_file() else folder / "nbformat.v4.schema.json"
