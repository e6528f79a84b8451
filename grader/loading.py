"""The one reader of an assignment: its files, in two phases that share one reading.

1. :func:`read_plan` reads ``assignment.yaml`` (and ``hidden.yaml``) and their scenario files once,
   parses them (through a :class:`~grader.spec_cache.SpecCache` when the caller trusts one) and
   validates them into a :class:`~grader.spec.Plan`: everything a sandbox needs, no scenario code
   imported (so no numpy either).
2. :func:`load` imports the scenario code from the very texts the plan holds (never from the
   files again), so the programs that ran and the checks that judge them cannot disagree; a file
   changed in between only changes the next plan's digest.

:class:`Loading` runs phase 2 in a thread, for ``grader check``, whose sandbox runs the programs
meanwhile. :class:`AssignmentFiles` is what a grader elsewhere needs: the files and their digest.
"""

from __future__ import annotations

import sys
import threading
import types
import zlib
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import grader.scenario_index as scenario_index
from grader.digests import sha256
from grader.errors import SpecError
from grader.provided import FINGERPRINT_FILE, read_fingerprint
from grader.records import record
from grader.scenario import Scenario
from grader.spec import (
    HIDDEN_SPEC_FILE,
    SPEC_FILE,
    Assignment,
    AssignmentFile,
    Plan,
    ScenarioPlan,
    ScenarioSpec,
    SpecText,
    plan_of,
)
from grader.spec_cache import SpecCache
from grader.spec_yaml import SpecErrors, parse

SCENARIO_ROLES = ("scenarios", "hidden_scenarios")


def read_plan(directory: str | Path, hidden: str | Path | None = None, *, cache: SpecCache | None = None,
              handout: str | Path | None = None) -> Plan:
    """Read and validate ``directory/assignment.yaml`` and, when ``hidden`` is a folder, its
    ``hidden.yaml``; with ``handout`` (the provided submission file), check that each task's
    ``functions`` exist in it. Raises :class:`~grader.errors.SpecError` naming every problem."""
    directory = Path(directory)
    spec_path = directory / SPEC_FILE
    if not spec_path.is_file():
        raise SpecError(str(spec_path), None, None,
                        f"no {SPEC_FILE} here; pass --assignment with the folder that holds it")
    files: list[AssignmentFile] = []
    public = _read_spec(spec_path, "spec", cache, files)
    hidden_text, hidden_directory = None, None
    if hidden is not None:
        hidden_directory = Path(hidden)
        hidden_path = hidden_directory / HIDDEN_SPEC_FILE
        if not hidden_path.is_file():
            raise SpecError(str(hidden_path), None, None,
                            f"the hidden scenarios were not found: no {HIDDEN_SPEC_FILE} in {hidden_directory}")
        hidden_text = _read_spec(hidden_path, "hidden_spec", cache, files)
    handout_text = _text(Path(handout), Path(handout).read_bytes()) if handout is not None else None
    provided = _read_fingerprint(directory / FINGERPRINT_FILE, files)
    return plan_of(public, hidden_text, directory=directory, hidden_directory=hidden_directory,
                   digest=digest_of(files), files=tuple(files), handout=handout_text, provided=provided)


def _read_fingerprint(path: Path, files: list[AssignmentFile]):
    """The handout's fingerprint beside the spec, when the assignment ships one (see grader.provided)."""
    if not path.is_file():
        return None
    data = path.read_bytes()
    files.append(AssignmentFile("provided", path.name, data))
    try:
        return str(path), read_fingerprint(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as error:
        return str(path), str(error) or type(error).__name__


def load_assignment(directory: str | Path, hidden: str | Path | None = None) -> Assignment:
    """Both phases at once: the plan of ``directory`` (and ``hidden``), with its scenario code."""
    return load(read_plan(directory, hidden))


def find_solutions(assignment_dir: str | Path) -> Path:
    """The instructor-only folder of an assignment: ``solutions/<id>`` in the nearest folder up
    from the assignment that has one (``exercises/autodiff`` -> ``solutions/autodiff``)."""
    assignment_dir = Path(assignment_dir).resolve()
    assignment_id = read_plan(assignment_dir).id  # the spec's errors, if any, are reported here
    looked = []
    for folder in assignment_dir.parents:
        candidate = folder / "solutions" / assignment_id
        if (candidate / HIDDEN_SPEC_FILE).is_file():
            return candidate
        looked.append(str(candidate))
        if (folder / ".git").exists():
            break
    raise SpecError(str(assignment_dir / SPEC_FILE), None, None, f"the hidden scenarios of {assignment_id!r} were "
                    f"not found (no {HIDDEN_SPEC_FILE} in {', '.join(looked[:3])}); pass --solutions DIR")


def digest_of(files: list[AssignmentFile] | tuple[AssignmentFile, ...]) -> str:
    """sha256 over the spec and scenario files' bytes, in reading order (public, then hidden)."""
    digest = sha256()
    for file in files:
        digest.update(file.data)
    return digest.hexdigest()


def _read_spec(path: Path, role: str, cache: SpecCache | None, files: list[AssignmentFile]) -> SpecText:
    data = path.read_bytes()
    text = _text(path, data)
    document = cache.parsed(text, lambda t: parse(t, str(path))) if cache is not None else parse(text, str(path))
    files.append(AssignmentFile(role, path.name, data))
    name = document.get("scenario_file")
    scenario_path = path.parent / name if isinstance(name, str) else None
    if scenario_path is None or not scenario_path.is_file():
        return SpecText(str(path), document)  # plan_of reports what is missing
    scenario_data = scenario_path.read_bytes()
    scenario_text = _text(scenario_path, scenario_data)
    files.append(AssignmentFile(role.replace("spec", "scenarios"), scenario_path.name, scenario_data))
    try:
        index = cache.indexed(scenario_text) if cache is not None else _index(scenario_text)
    except SyntaxError as error:
        raise SpecError(str(scenario_path), error.lineno, "scenarios", f"syntax error: {error.msg}") from None
    except (ValueError, RecursionError, MemoryError) as error:
        raise SpecError(str(scenario_path), None, "scenarios", f"cannot be parsed: {error}") from None
    return SpecText(str(path), document, str(scenario_path), scenario_text, index)


def _index(text: str) -> tuple[dict, ...]:
    return scenario_index.functions(text)


def _text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SpecError(str(path), None, None, f"is not UTF-8 text (byte {error.start}); save it as UTF-8") from None


# --------------------------------------------------------------------------- phase 2


def load(plan: Plan, cache: SpecCache | None = None) -> Assignment:
    """The assignment of ``plan``: its scenario files imported from the texts the plan was read from
    (their bytecode from ``cache``, when the caller trusts one)."""
    defined: dict[str, dict[str, Scenario]] = {}
    spec_of: dict[str, str] = {}  # scenario file -> the spec file that lists its scenarios
    for file in plan.files:
        if file.role in SCENARIO_ROLES:
            public = file.role == "scenarios"
            path = str(Path((plan.directory if public else plan.hidden_directory) or ".") / file.name)
            defined[path] = import_scenarios(file.data.decode("utf-8"), path, cache)
            spec_of[path] = SPEC_FILE if public else HIDDEN_SPEC_FILE
    problems: list[SpecError] = []
    specs = []
    for planned in plan.scenarios:
        code = defined.get(planned.file, {}).get(planned.id)
        if code is None:
            problems.append(SpecError(planned.file, planned.line, planned.id,
                                      f"{planned.id}() is not a scenario: decorate it with @scenario"))
        elif code.check_fn is None:
            problems.append(SpecError(planned.file, planned.line, planned.id,
                                      f"scenario {planned.id!r} has no check; add @{planned.id}.check below it"))
        else:
            specs.append(ScenarioSpec(**{f.name: getattr(planned, f.name) for f in fields(ScenarioPlan)}, code=code))
    listed = {(s.file, s.id) for s in plan.scenarios}
    for path, found in defined.items():
        for sid, code in found.items():
            if (path, sid) not in listed:
                problems.append(SpecError(path, code.program.__code__.co_firstlineno, sid,
                                          f"scenario {sid!r} is defined in {Path(path).name} but not listed in "
                                          f"{spec_of[path]}"))
    if problems:
        raise SpecErrors(problems)
    values = {f.name: getattr(plan, f.name) for f in fields(Plan)}
    return Assignment(**{**values, "scenarios": tuple(specs)})


def import_scenarios(text: str, path: str, cache: SpecCache | None = None) -> dict[str, Scenario]:
    """Run a scenario file's text (trusted: the instructor's) as a module; its scenarios by id."""
    module_name = f"_grader_scenarios_{zlib.crc32(path.encode()):x}"
    module = types.ModuleType(module_name)
    module.__file__ = path
    sys.modules[module_name] = module  # dataclasses and pickle look modules up by name
    try:
        code = cache.compiled(text, path) if cache is not None else compile(text, path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except SyntaxError as error:
        raise SpecError(path, error.lineno, "scenarios", f"syntax error: {error.msg}") from None
    except Exception as error:
        raise SpecError(path, None, "scenarios", f"raised {type(error).__name__}: {error}") from None
    return {name: value for name, value in vars(module).items() if isinstance(value, Scenario) and value.id == name}


# --------------------------------------------------------------------------- in the background


class Loading:
    """Phase 2 of a plan in a thread of its own, while the sandbox already runs the plan's programs.

    ``with Loading(plan) as loading:`` starts it; :meth:`assignment` waits for it (re-raising what
    loading raised) and :meth:`inputs` gives the runner its inputs from it. A plain thread, not
    concurrent.futures, whose import alone would delay the sandbox's job (benchmarks/README.md).
    While it loads, the GIL is handed over often, so the thread driving the sandbox never waits long
    behind the imports of numpy and the checks.
    """

    SWITCH_INTERVAL = 0.0005

    def __init__(self, plan: Plan, cache: SpecCache | None = None):
        self.plan, self.cache = plan, cache
        self._thread = threading.Thread(target=self._load, name="grader-load", daemon=True)
        self._outcome: tuple[Assignment | None, BaseException | None] = (None, None)
        self._switch = sys.getswitchinterval()

    def __enter__(self) -> Loading:
        sys.setswitchinterval(self.SWITCH_INTERVAL)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        sys.setswitchinterval(self._switch)

    def _load(self) -> None:
        try:
            import grader.judge  # noqa: F401  (judging's modules too, while the sandbox runs)
            self._outcome = (load(self.plan, self.cache), None)
        except BaseException as error:  # handed to the thread that asks for the assignment
            self._outcome = (None, error)

    def assignment(self) -> Assignment:
        """The loaded assignment, once it is there; re-raises what loading raised."""
        self._thread.join()
        assignment, error = self._outcome
        if error is not None:
            raise error
        assert assignment is not None
        return assignment

    def loaded(self) -> Assignment | None:
        """The assignment if it has loaded by now (None while it loads, or when loading failed)."""
        return None if self._thread.is_alive() else self._outcome[0]

    def inputs(self, seed: int) -> Callable[[ScenarioPlan], dict]:
        """Inputs for the runner: a scenario without ``inputs=`` needs no loaded code."""
        return lambda planned: self.assignment().inputs(planned.id, seed) if planned.has_inputs else {}


# --------------------------------------------------------------------------- elsewhere


@record
class AssignmentFiles:
    """An assignment as files, for a grader on another machine: the spec and scenario files of the
    public folder and of the hidden one, and the digest they must give there."""

    files: tuple[AssignmentFile, ...]
    digest: str

    @classmethod
    def of(cls, plan: Plan) -> AssignmentFiles:
        return cls(plan.files, plan.digest)

    def write(self, folder: Path) -> tuple[Path, Path | None]:
        """Lay the files out under ``folder`` (``assignment/`` and ``hidden/``); returns the two."""
        public, hidden = folder / "assignment", folder / "hidden"
        for file in self.files:
            target = public if file.role in ("spec", "scenarios", "provided") else hidden
            target.mkdir(parents=True, exist_ok=True)
            (target / file.name).write_bytes(file.data)
        return public, hidden if any(f.role == "hidden_spec" for f in self.files) else None

    def load(self, folder: Path) -> Assignment:
        """The assignment these files make, written under ``folder``, checked against the digest."""
        if digest_of(self.files) != self.digest:
            raise SpecError("assignment files", None, None, "their content does not match the digest they came with")
        public, hidden = self.write(folder)
        assignment = load_assignment(public, hidden)
        if assignment.digest != self.digest:
            raise SpecError(str(folder), None, None, "the files written here do not give the digest they came with")
        return assignment
