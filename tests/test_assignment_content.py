"""The autodiff assignment's content, graded through the library in real sandboxes.

The reference solution earns 100/100, the untouched stub 0 with "not implemented yet" everywhere, each buggy
fixture (made by tests/fixtures/make_buggy.py, one planted bug each) fails exactly the scenarios listed below with the
misconception named, and the randomized scenarios reject an answer computed for other inputs.
"""
import ast
import importlib.util
import json
from pathlib import Path

import pytest
from buggy_fixtures import BUGGY

from grader import grade_submission, load_assignment
from grader.expect import Mismatch
from grader.results import Status
from grader.sandbox.decoding import decode
from grader.sandbox.encoding import encode

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ROOT / "exercises" / "autodiff" / "autodiff.py"
SEED = 1   # randomized scenarios draw their inputs from it; the table below holds for this seed

# fixture -> (scenarios that must fail, a substring of the misconception one of them must name; None for a
# bug planted in the provided engine, which must fail at least one "engine" scenario instead)
EXPECTED = {
    'detach_clears_y_history': (['d2l_detach_keeps_y_graph', 'detach_properties', 'random_d2l_detach'],
        'detach() changed y itself (its requires_'),
    'detach_requires_grad_true': (['detach_properties', 'detached_gets_no_grad', 'backward_of_detached_raises', 'detach_of_leaf_keeps_leaf', 'stop_gradient_in_backward'],
        'the detached tensor has requires_grad=Tr'),
    'detach_returns_self': (['d2l_detach_dz_dx', 'd2l_detach_keeps_y_graph', 'detach_properties', 'detached_gets_no_grad', 'stop_gradient_on_tape', 'd2l_persistent_tape', 'backward_of_detached_raises', 'x_times_detached_x', 'detach_of_leaf_keeps_leaf', 'detached_requires_grad_is_new_leaf', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes', 'random_d2l_detach', 'random_stop_gradient_mix', 'random_persistent_tape'],
        'gradient flowed through the detached val'),
    'detach_shallow_copy': (['d2l_detach_dz_dx', 'detach_properties', 'detached_gets_no_grad', 'backward_of_detached_raises', 'detach_of_leaf_keeps_leaf', 'detached_requires_grad_is_new_leaf', 'stop_gradient_in_backward', 'random_d2l_detach'],
        'gradient flowed through the detached val'),
    'detach_turns_off_y_requires_grad': (['d2l_detach_keeps_y_graph', 'detach_properties', 'x_times_detached_x', 'detach_of_leaf_keeps_leaf', 'random_d2l_detach'],
        'detach() changed y itself (its requires_'),
    'engine_exponential_backward': (['engine_long_chain_linear_time'],
        None),
    'engine_frees_every_record': (['d2l_detach_keeps_y_graph', 'engine_two_graphs_accumulate', 'random_d2l_detach'],
        "y's graph was gone after the first backw"),
    'engine_mul_backward_swapped': (['d2l_detach_dz_dx', 'd2l_persistent_tape', 'non_persistent_second_call_raises', 'one_call_with_list_of_sources', 'engine_retain_graph_accumulates', 'engine_two_graphs_accumulate', 'engine_basic_rules', 'engine_numbers_on_either_side', 'engine_diamond_and_double_add', 'engine_broadcasting', 'engine_d2l_control_flow', 'detached_gets_no_grad', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes', 'random_d2l_detach', 'random_stop_gradient_mix', 'nested_tapes_x_cubed', 'watched_and_unwatched', 'persistent_calls_independent', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent', 'engine_random_broadcasting', 'engine_random_control_flow'],
        None),
    'engine_no_unbroadcast': (['engine_broadcasting', 'engine_random_broadcasting'],
        None),
    'engine_radd_missing': (['engine_numbers_on_either_side'],
        None),
    'engine_retain_graph_ignored': (['engine_retain_graph_accumulates'],
        None),
    'engine_rsub_wrong': (['engine_numbers_on_either_side'],
        None),
    'list_of_sources_counts_as_calls': (['one_call_with_list_of_sources', 'watched_and_unwatched', 'tuple_call_then_raises'],
        'one gradient() call with a list of sourc'),
    'persistent_accumulates': (['d2l_persistent_tape', 'tf_docs_persistent', 'persistent_calls_independent', 'random_persistent_tape'],
        "the persistent tape's answers grow from "),
    'persistent_ignored_always_released': (['d2l_persistent_tape', 'tf_docs_persistent', 'persistent_calls_independent', 'random_persistent_tape'],
        'the persistent tape refused a second cal'),
    'persistent_ignored_never_released': (['non_persistent_second_call_raises', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        'the non-persistent tape answered a secon'),
    'persistent_inverted': (['d2l_persistent_tape', 'non_persistent_second_call_raises', 'tf_docs_persistent', 'persistent_calls_independent', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent'],
        'the persistent tape refused a second cal'),
    'release_frees_backward_records': (['tape_leaves_backward_alone'],
        'releasing the tape freed the records bac'),
    'released_before_first_call': (['stop_gradient_on_tape', 'non_persistent_second_call_raises', 'one_call_with_list_of_sources', 'gradient_after_with_block', 'stop_gradient_nested_tapes', 'random_stop_gradient_mix', 'nested_tapes_x_cubed', 'watched_and_unwatched', 'auto_watch_requires_grad', 'tape_leaves_backward_alone', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        'the tape had nothing left at its first g'),
    'second_call_returns_none': (['non_persistent_second_call_raises', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        'a used-up non-persistent tape returned N'),
    'second_call_returns_zeros': (['non_persistent_second_call_raises', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        'a used-up non-persistent tape returned z'),
    'stop_gradient_identity': (['stop_gradient_on_tape', 'd2l_persistent_tape', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes', 'random_stop_gradient_mix', 'random_persistent_tape'],
        'stop_gradient let the gradient through ('),
    'stop_gradient_not_leaf': (['stop_gradient_on_tape', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes'],
        'stop_gradient multiplied the gradient by'),
    'tape_cleared_on_exit': (['stop_gradient_on_tape', 'd2l_persistent_tape', 'non_persistent_second_call_raises', 'one_call_with_list_of_sources', 'gradient_after_with_block', 'stop_gradient_nested_tapes', 'random_stop_gradient_mix', 'tf_docs_persistent', 'nested_tapes_x_cubed', 'watched_and_unwatched', 'auto_watch_requires_grad', 'persistent_calls_independent', 'tape_leaves_backward_alone', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent'],
        'the tape had nothing left at its first g'),
    'used_tracked_per_target': (['non_persistent_second_call_raises', 'random_non_persistent'],
        'the non-persistent tape answered a secon'),
}


@pytest.fixture(scope="module")
def assignment():
    return load_assignment(ROOT / "exercises" / "autodiff", hidden=ROOT / "solutions" / "autodiff")


_graded = {}   # path -> result: each submission is graded once per test run


def _grade(path, assignment):
    if path not in _graded:
        _graded[path] = grade_submission(path, assignment, seed=SEED, scope="all")
    return _graded[path]


def _by_id(result):
    return {s.id: s for s in result.scenarios}


def test_reference_scores_full_marks(assignment):
    result = _grade(REFERENCE, assignment)
    failed = {s.id: s.feedback.summary for s in result.scenarios if s.status is not Status.PASSED}
    assert failed == {}
    assert result.score == result.max_score == 100


def test_spec_shape(assignment):
    specs = assignment.scenarios
    assert len(specs) >= 32
    assert sum(s.points for s in specs if s.task in ("detach", "tape")) == 100
    assert all(s.points == 0 for s in specs if s.task == "engine")
    assert {s.task for s in specs if s.visibility == "public"} == {"detach", "tape", "engine"}
    assert any(s.code.make_inputs for s in specs if s.visibility == "hidden" and s.task != "engine")


def test_exercise_folder_reveals_no_hidden_scenario(assignment):
    public_text = "".join(p.read_text() for p in (ROOT / "exercises" / "autodiff").iterdir() if p.is_file())
    for spec in assignment.scenarios:
        if spec.visibility == "hidden":
            assert spec.id not in public_text


def _sentences(path):
    """The module-level string constants of a scenario file (its misconception sentences), read with ast."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.targets[0].id: node.value.value for node in tree.body
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def test_a_misconception_reads_the_same_in_public_and_hidden_scenarios():
    # The hidden file cannot import the public one (they live apart), so each keeps its own copy of a
    # shared sentence: a student must not be told one thing by `grader check` and another by the grade.
    public = _sentences(ROOT / "exercises" / "autodiff" / "scenarios.py")
    hidden = _sentences(ROOT / "solutions" / "autodiff" / "hidden_scenarios.py")
    shared = public.keys() & hidden.keys()
    assert len(shared) >= 10
    assert {name: hidden[name] for name in shared if hidden[name] != public[name]} == {}


def test_stub_scores_zero_with_not_implemented(assignment):
    result = _grade(STUB, assignment)
    assert result.score == 0
    for spec in result.scenarios:
        if spec.task == "engine":
            assert spec.status is Status.PASSED, spec.id    # the given engine works as shipped
        else:
            assert spec.status is Status.ERROR, spec.id
            assert spec.feedback.summary.startswith("not implemented yet"), (spec.id, spec.feedback.summary)


def test_every_fixture_is_in_the_table():
    assert sorted(p.stem for p in BUGGY.glob("*.py")) == sorted(EXPECTED)
    assert len(EXPECTED) >= 20


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_buggy_fixture_is_caught(name, assignment):
    failing, misconception = EXPECTED[name]
    result = _grade(BUGGY / f"{name}.py", assignment)
    scenarios = _by_id(result)
    assert sorted(s.id for s in result.scenarios if s.status is not Status.PASSED) == sorted(failing)
    if misconception is None:   # a bug in the provided engine shows as a failing provided-engine check
        assert any(scenarios[sid].task == "engine" for sid in failing)
    else:                       # a task bug costs points and the feedback names the misconception
        assert result.score < 100
        named = [scenarios[sid].feedback.misconception or "" for sid in failing]
        assert any(misconception in text for text in named), named


def _reference_module():
    spec = importlib.util.spec_from_file_location("autodiff_reference_for_test", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_randomized_scenarios_reject_answers_for_other_inputs(assignment):
    """A hard-coded answer fails: what the reference observes under one seed fails the check under another."""
    reference = _reference_module()
    randomized = [s for s in assignment.scenarios if s.code.make_inputs is not None]
    assert len(randomized) >= 6
    for spec in randomized:
        first, second = spec.code.inputs(1), spec.code.inputs(2)
        assert spec.code.inputs(1).keys() == first.keys()
        # as the grader would receive it: through the sandbox's encoding (exceptions become Raised records)
        observed = decode(json.dumps(encode(spec.code.program(reference, **first))).encode())
        spec.code.check_fn(observed, **first)                  # right for its own inputs
        with pytest.raises(Mismatch):
            spec.code.check_fn(observed, **second)             # wrong for the other seed's


def test_randomized_scenarios_pass_the_reference_under_another_seed(assignment):
    result = grade_submission(REFERENCE, assignment, seed=2, scope="all")
    assert result.score == 100
