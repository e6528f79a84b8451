"""What a sandbox needs to run an assignment: programs and limits, never checks or expected values.

A :class:`Rubric` comes either from a loaded :class:`~grader.spec.Assignment` or, for
``grader check``, straight from the files (:func:`read_public_rubric`: the YAML and the scenario
file's syntax tree, nothing imported, no numpy). The second lets the sandbox start running
programs while the grader is still importing the checks; the runner then verifies that each
program it ran is the one the loaded assignment defines.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

from grader import scenario_index
from grader.sandbox.framing import pack_code
from grader.spec import SPEC_FILE, Assignment, Limits, ScenarioSpec
from grader.spec_yaml import parse


@dataclass(frozen=True)
class Program:
    """One scenario as the sandbox sees it."""

    index: int
    id: str
    source: str
    time_limit: float
    has_inputs: bool  # declared with @scenario(inputs=...): its inputs come from the loaded assignment
    hidden: bool = False

    def payload(self, encoded_inputs) -> dict:
        """The run command's scenario (inputs already encoded): the program compiled
        (its source goes too, for the lines of its tracebacks)."""
        return {"index": self.index, "id": self.id, "function": self.id, "source": self.source,
                "code": compiled_program(self.id, self.source), "inputs": encoded_inputs,
                "cpu_seconds": math.ceil(self.time_limit) + 1}


@functools.lru_cache(maxsize=1024)
def compiled_program(scenario_id: str, source: str) -> str:
    """A program's code for the sandbox, compiled once per process, not once per run: a batch
    runs the same programs for every submission. Its file name is what tracebacks show."""
    return pack_code(compile(source, f"<scenario {scenario_id}>", "exec", dont_inherit=True, optimize=0))


@dataclass(frozen=True)
class Rubric:
    forbidden: tuple[str, ...]
    limits: Limits
    programs: tuple[Program, ...]

    @classmethod
    def of(cls, assignment: Assignment, specs: tuple[ScenarioSpec, ...]) -> "Rubric":
        programs = tuple(Program(index, spec.id, spec.code.source, spec.time_limit, spec.code.make_inputs is not None,
                                 hidden=spec.visibility == "hidden")
                         for index, spec in enumerate(specs))
        return cls(assignment.forbidden_imports, assignment.limits, programs)

    def job(self) -> dict:
        """The per-submission settings the sandbox receives (programs follow one per run)."""
        return {"forbidden": list(self.forbidden), "memory_mb": self.limits.memory_mb,
                "output_limit": self.limits.output_bytes}


def read_public_rubric(directory: Path) -> Rubric | None:
    """The public rubric from the files alone, or None when anything is unusual (then the caller
    loads the assignment properly, which reports whatever is wrong)."""
    try:
        document = parse((directory / SPEC_FILE).read_text(encoding="utf-8"), str(directory / SPEC_FILE))
        text = (directory / document["scenario_file"]).read_text(encoding="utf-8")
        source_lines = text.splitlines(keepends=True)
        # The index the loader's scenarios use too: parsed once, or not at all when cached.
        functions = {record["name"]: record for record in scenario_index.functions(text) if record["top"]}
        default_time = float(document.get("time_limit", 5.0))
        limits = Limits(default_time, float(document.get("import_time_limit", 10.0)),
                        int(document.get("memory_limit_mb", 1024)), int(document.get("output_limit_kb", 64)) * 1024)
        programs = []
        for index, item in enumerate(item for item in document["scenarios"]
                                     if item.get("visibility", "public") == "public"):
            function = functions[item["id"]]
            source = "".join(source_lines[function["line"] - 1: function["end"]])
            programs.append(Program(index, item["id"], source, float(item.get("time_limit", default_time)),
                                    function["inputs"]))
        return Rubric(tuple(document.get("forbidden_imports", ())), limits, tuple(programs))
    except Exception:  # noqa: BLE001 - a best-effort shortcut; the full load is the authority
        return None
