"""What the grader sends the sandbox for one submission: the job, then one run command per scenario.

Programs and limits only, never a check or an expected value (those stay in the grader).
"""

from __future__ import annotations

import functools
import math

from grader.sandbox.encoding import encode
from grader.sandbox.framing import pack_code
from grader.spec import Plan, ScenarioPlan


def job(plan: Plan) -> dict:
    """The per-submission settings the sandbox receives (programs follow, one per run)."""
    return {"forbidden": list(plan.forbidden_imports), "memory_mb": plan.limits.memory_mb,
            "output_limit": plan.limits.output_bytes}


def run(index: int, scenario: ScenarioPlan, inputs: dict) -> dict:
    """The run command's scenario: the program compiled (its source goes too, for the lines of its
    tracebacks), its inputs encoded, its CPU limit."""
    return {"index": index, "id": scenario.id, "function": scenario.id, "source": scenario.source,
            "code": compiled_program(scenario.id, scenario.source), "inputs": encode(inputs),
            "cpu_seconds": math.ceil(scenario.time_limit) + 1}


@functools.lru_cache(maxsize=1024)
def compiled_program(scenario_id: str, source: str) -> str:
    """A program's code for the sandbox, compiled once per process, not once per run: a batch
    runs the same programs for every submission. Its file name is what tracebacks show."""
    return pack_code(compile(source, f"<scenario {scenario_id}>", "exec", dont_inherit=True, optimize=0))
