"""The autodiff assignment against its own promises: every clause of the exercise README's contract is checked by
a scenario, each task's scenarios use only that task's code (read from the scenario index's programs), and a
wrong kind of answer (None, a number, an object claiming equality with everything) fails cleanly."""
import ast
import re
from pathlib import Path

import pytest

from grader import grade_submission, load_assignment
from grader.audit.functions import functions
from grader.audit.operators import ANYTHING
from grader.results import Status

ROOT = Path(__file__).resolve().parent.parent
EXERCISE = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
NOT_GRADED = ()

# Each bullet of the README's "The API contract" (by its opening words) -> the scenarios that check it.
CONTRACT = {
    "`Tensor(data, requires_grad=False)`": ("engine_tensor_contract",),
    "Attributes: `.data`, `.shape`": ("engine_tensor_contract", "engine_backward_contract"),
    "Operations make new tensors": ("engine_basic_rules", "engine_numbers_on_either_side", "engine_broadcasting",
                                    "engine_random_broadcasting", "engine_backward_contract"),
    "`<  <=  >  >=` against a number": ("engine_tensor_contract", "engine_d2l_control_flow"),
    "An operation's result has `requires_grad=True`": ("engine_tensor_contract", "detach_properties",
                                                        "stop_gradient_in_backward"),
    "`t.requires_grad_(flag=True)`": ("engine_tensor_contract", "detached_requires_grad_is_new_leaf"),
    "`t.backward(gradient=None, retain_graph=False)`": ("engine_two_graphs_accumulate",
                                                        "engine_retain_graph_accumulates", "engine_backward_contract",
                                                        "engine_diamond_and_double_add"),
    "On a tensor with `requires_grad=False`": ("engine_backward_contract", "backward_of_detached_raises"),
    "`gradient=None` only for a one-element tensor": ("engine_backward_contract",),
    "Without `retain_graph=True`": ("engine_backward_twice_raises", "engine_two_graphs_accumulate",
                                    "engine_backward_contract", "d2l_detach_keeps_y_graph"),
    "`t.detach()` returns a new tensor": ("detach_properties", "d2l_detach_dz_dx", "d2l_detach_keeps_y_graph",
                                          "detached_gets_no_grad", "x_times_detached_x", "detach_of_leaf_keeps_leaf"),
    "`stop_gradient(t)` returns a tensor": ("stop_gradient_on_tape", "stop_gradient_in_backward",
                                            "stop_gradient_nested_tapes", "random_stop_gradient_mix"),
    "`GradientTape(persistent=False, watch_accessed_variables=True)`": ("engine_tape_scope", "engine_tape_records"),
    "Inside its `with` block it records": ("engine_tape_records", "engine_tape_scope"),
    "`tape.gradient(target, sources, unconnected_gradients=\"none\")`": ("engine_tape_records",),
    "differentiates `target` only through": ("engine_tape_scope", "non_persistent_second_call_raises"),
    "`sources` is one tensor": ("one_call_with_list_of_sources", "tuple_call_then_raises", "engine_tape_records"),
    "each result is a tensor of its source's shape": ("engine_tape_records", "engine_tape_scope",
                                                       "stop_gradient_on_tape"),
    "`tape.gradient(x, x)` for a watched `x`": ("engine_tape_records",),
    "it never reads or changes any `.grad`": ("persistent_calls_independent", "tape_leaves_backward_alone"),
    "it works after the `with` block has ended": ("gradient_after_with_block",),
    "Non-persistent (the default)": ("non_persistent_second_call_raises", "non_persistent_same_target_raises",
                                     "one_call_with_list_of_sources", "tuple_call_then_raises"),
    "`persistent=True`: any number": ("d2l_persistent_tape", "persistent_calls_independent", "tf_docs_persistent"),
    "Higher order": ("nested_tapes_x_cubed", "stop_gradient_nested_tapes"),
    "Not graded:": NOT_GRADED,
}


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(EXERCISE, hidden=ROOT / "solutions" / "autodiff")


def _contract_bullets():
    text = (EXERCISE / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## The API contract"):text.index("## Checking your work")]
    return [match.group(1) for match in re.finditer(r"^ *- (.*)$", section, flags=re.MULTILINE)]


def test_every_contract_clause_is_checked_by_a_scenario(assignment):
    bullets = _contract_bullets()
    unmapped = [b for b in bullets if not any(b.startswith(opening) for opening in CONTRACT)]
    assert unmapped == []                                  # the README claims nothing the map does not name
    stale = [opening for opening in CONTRACT if not any(b.startswith(opening) for b in bullets)]
    assert stale == []
    ids = {s.id for s in assignment.scenarios}
    assert {sid for sids in CONTRACT.values() for sid in sids} - ids == set()
    assert [opening for opening, sids in CONTRACT.items() if not sids and opening != "Not graded:"] == []


def _task_names(assignment):
    """Each task's functions, by the name a program would use (`detach`, `_take_records_for_call`)."""
    return {task.id: {name.split(".")[-1] for name in task.functions} for task in assignment.tasks}


def _provided_callers(assignment):
    """The provided functions of the reference that call a task's function (`gradient` calls
    `_take_records_for_call`): a program of another task using one must give it its own version."""
    names = _task_names(assignment)
    owner = {name: task for task, functions_ in names.items() for name in functions_}
    callers = {}
    for qualname, located in functions(ast.parse(REFERENCE.read_text(encoding="utf-8"))).items():
        short = qualname.split(".")[-1]
        if short in owner:
            continue
        used = {node.attr for node in ast.walk(located.node) if isinstance(node, ast.Attribute)}
        used |= {node.id for node in ast.walk(located.node) if isinstance(node, ast.Name)}
        for name in used & set(owner):
            callers[short] = (owner[name], name)
    return callers


def test_a_program_of_one_task_uses_no_other_tasks_code(assignment):
    names = _task_names(assignment)
    callers = _provided_callers(assignment)
    assert callers == {"gradient": ("tape", "_take_records_for_call")}   # what the engine shows today
    problems = []
    for spec in assignment.scenarios:
        tree = ast.parse(spec.source)
        loads = [node for node in ast.walk(tree) if isinstance(getattr(node, "ctx", None), ast.Load)]
        read = {node.attr for node in loads if isinstance(node, ast.Attribute)}
        read |= {node.id for node in loads if isinstance(node, ast.Name)}
        replaced = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                    and isinstance(node.ctx, ast.Store)}
        for task, functions_ in names.items():
            if task != spec.task and read & functions_:
                problems.append(f"{spec.id} ({spec.task}) calls {sorted(read & functions_)} of task {task}")
        for caller, (task, function) in callers.items():
            if task != spec.task and caller in read and function not in replaced:
                problems.append(f"{spec.id} ({spec.task}) uses {caller}, which runs {function} of task {task}, "
                                "without giving it its own")
    assert problems == []


def _handout_with(task_body):
    """The reference with every function of Task 1 and Task 2 replaced by ``task_body``."""
    from grader.audit.functions import with_body
    source = REFERENCE.read_text(encoding="utf-8")
    for qualname in ("Tensor.detach", "stop_gradient", "GradientTape._take_records_for_call"):
        source = with_body(source, functions(ast.parse(source))[qualname], task_body)
    return source


@pytest.mark.parametrize("body", ["return None", "return 0.0", ANYTHING], ids=["none", "constant", "anything"])
def test_a_wrong_kind_of_answer_fails_cleanly_and_earns_nothing(assignment, tmp_path, body):
    path = tmp_path / "autodiff.py"
    path.write_text(_handout_with(body), encoding="utf-8")
    result = grade_submission(path, assignment, seed=1, scope="all")
    assert result.score == 0
    for scenario in result.scenarios:
        if scenario.task == "engine":
            assert scenario.status is Status.PASSED, scenario.id
        elif scenario.status is Status.ERROR:
            # Only the student's file may raise (the engine unpacking what _take_records_for_call gave back),
            # never the scenario's own code on a wrong value.
            frames = re.findall(r'File "([^"]+)"', scenario.feedback.traceback or "")
            assert frames and frames[-1].endswith("autodiff.py"), (scenario.id, scenario.feedback.traceback)
        else:
            assert scenario.status is Status.FAILED, (scenario.id, scenario.status)
