"""The autodiff assignment's content, graded through the library in real sandboxes.

The reference solution earns 100/100, the untouched stub 0 with "not implemented yet" everywhere, each buggy
fixture (made by tests/fixtures/make_buggy.py, one planted bug each) fails exactly the scenarios listed below with
its own misconception named and costs points only in its own task, and the randomized scenarios reject an answer
computed for other inputs.
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

# fixture -> (the scenarios it fails, the provided parts it changes). Each fixture is the named mutant of the
# same id in solutions/autodiff/mutants.yaml: its task, and the misconceptions that describe it, are there.
EXPECTED = {
    'detach_clears_y_history': (['d2l_detach_keeps_y_graph', 'detach_properties', 'random_d2l_detach'],
        []),
    'detach_requires_grad_true': (['detach_properties', 'stop_gradient_on_tape', 'detached_gets_no_grad', 'backward_of_detached_raises', 'detach_of_leaf_keeps_leaf', 'stop_gradient_in_backward'],
        []),
    'detach_returns_self': (['d2l_detach_dz_dx', 'd2l_detach_keeps_y_graph', 'detach_properties', 'stop_gradient_on_tape', 'detached_gets_no_grad', 'backward_of_detached_raises', 'x_times_detached_x', 'detach_of_leaf_keeps_leaf', 'detached_requires_grad_is_new_leaf', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes', 'random_d2l_detach', 'random_stop_gradient_mix'],
        []),
    'detach_shallow_copy': (['d2l_detach_dz_dx', 'detach_properties', 'stop_gradient_on_tape', 'detached_gets_no_grad', 'backward_of_detached_raises', 'detach_of_leaf_keeps_leaf', 'detached_requires_grad_is_new_leaf', 'stop_gradient_in_backward', 'random_d2l_detach'],
        []),
    'detach_turns_off_y_requires_grad': (['d2l_detach_keeps_y_graph', 'detach_properties', 'x_times_detached_x', 'detach_of_leaf_keeps_leaf', 'random_d2l_detach'],
        []),
    'engine_exponential_backward': (['engine_long_chain_linear_time', 'engine_deep_chain'],
        ['Tensor.backward']),
    'engine_frees_every_record': (['d2l_detach_keeps_y_graph', 'engine_two_graphs_accumulate', 'random_d2l_detach', 'engine_backward_contract'],
        ['_make', 'Tensor.backward', 'module-level code']),
    'engine_mul_backward_swapped': (['d2l_detach_dz_dx', 'd2l_persistent_tape', 'non_persistent_second_call_raises', 'one_call_with_list_of_sources', 'engine_basic_rules', 'engine_numbers_on_either_side', 'engine_retain_graph_accumulates', 'engine_two_graphs_accumulate', 'engine_diamond_and_double_add', 'engine_broadcasting', 'engine_d2l_control_flow', 'detached_gets_no_grad', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes', 'random_d2l_detach', 'random_stop_gradient_mix', 'nested_tapes_x_cubed', 'persistent_calls_independent', 'tape_leaves_backward_alone', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent', 'engine_backward_contract', 'engine_rules_in_chains', 'engine_tape_targets_and_nesting', 'engine_tape_records', 'engine_tape_scope', 'engine_random_broadcasting', 'engine_random_control_flow'],
        ['Tensor.__mul__']),
    'engine_no_unbroadcast': (['engine_broadcasting', 'engine_rules_in_chains', 'engine_random_broadcasting'],
        ['Tensor._sum_to']),
    'engine_radd_missing': (['engine_numbers_on_either_side'],
        ['Tensor.__radd__']),
    'engine_retain_graph_ignored': (['engine_retain_graph_accumulates'],
        ['Tensor.backward']),
    'engine_rsub_wrong': (['engine_numbers_on_either_side'],
        ['Tensor.__rsub__']),
    'list_of_sources_counts_as_calls': (['one_call_with_list_of_sources', 'tuple_call_then_raises'],
        ['GradientTape.gradient']),
    'persistent_accumulates': (['d2l_persistent_tape', 'non_persistent_second_call_raises', 'gradient_after_with_block', 'tf_docs_persistent', 'nested_tapes_x_cubed', 'persistent_calls_independent', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent', 'engine_tape_targets_and_nesting'],
        ['GradientTape.__init__', 'GradientTape.gradient']),
    'persistent_ignored_always_released': (['d2l_persistent_tape', 'non_persistent_second_call_raises', 'tf_docs_persistent', 'nested_tapes_x_cubed', 'persistent_calls_independent', 'random_persistent_tape'],
        []),
    'persistent_ignored_never_released': (['non_persistent_second_call_raises', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        []),
    'persistent_inverted': (['d2l_persistent_tape', 'non_persistent_second_call_raises', 'tf_docs_persistent', 'nested_tapes_x_cubed', 'persistent_calls_independent', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent'],
        []),
    'release_frees_backward_records': (['tape_leaves_backward_alone'],
        []),
    'released_before_first_call': (['non_persistent_second_call_raises', 'one_call_with_list_of_sources', 'gradient_after_with_block', 'nested_tapes_x_cubed', 'tape_leaves_backward_alone', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        []),
    'second_call_returns_none': (['non_persistent_second_call_raises', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        []),
    'second_call_returns_zeros': (['non_persistent_second_call_raises', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_non_persistent'],
        ['GradientTape.gradient']),
    'stop_gradient_identity': (['stop_gradient_on_tape', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes', 'random_stop_gradient_mix'],
        []),
    'stop_gradient_not_leaf': (['stop_gradient_on_tape', 'stop_gradient_in_backward', 'stop_gradient_nested_tapes'],
        []),
    'tape_cleared_on_exit': (['d2l_persistent_tape', 'non_persistent_second_call_raises', 'one_call_with_list_of_sources', 'gradient_after_with_block', 'tf_docs_persistent', 'nested_tapes_x_cubed', 'persistent_calls_independent', 'tape_leaves_backward_alone', 'non_persistent_same_target_raises', 'tuple_call_then_raises', 'random_persistent_tape', 'random_non_persistent', 'engine_tape_targets_and_nesting'],
        ['GradientTape.__exit__']),
    'used_tracked_per_target': (['non_persistent_second_call_raises', 'random_non_persistent'],
        ['GradientTape.gradient']),
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
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id.isupper():
            try:
                value = ast.literal_eval(node.value)
            except ValueError:   # not a literal (the inputs of a program, say)
                continue
            if isinstance(value, str):
                found[node.targets[0].id] = value
    return found


PUBLIC_FILE = ROOT / "exercises" / "autodiff" / "scenarios.py"
HIDDEN_FILE = ROOT / "solutions" / "autodiff" / "hidden_scenarios.py"
SENTENCES = {**_sentences(HIDDEN_FILE), **_sentences(PUBLIC_FILE)}


def test_each_misconception_has_one_text():
    # One copy of each sentence: the hidden file cannot import the public one (they live apart, and the audit
    # reads each file's own constants), so a key both files define must hold the same text in both, and no
    # two keys may hold one text. A student is told the same thing by `grader check` and by the grade.
    public, hidden = _sentences(PUBLIC_FILE), _sentences(HIDDEN_FILE)
    shared = public.keys() & hidden.keys()
    assert len(shared) >= 15
    assert {name: hidden[name] for name in shared if hidden[name] != public[name]} == {}
    by_text = {}
    for name, text in SENTENCES.items():
        by_text.setdefault(text, []).append(name)
    assert [names for names in by_text.values() if len(names) > 1] == []


def _named_mutants():
    import yaml
    document = yaml.safe_load((ROOT / "solutions" / "autodiff" / "mutants.yaml").read_text(encoding="utf-8"))
    mutants = {}
    for mutant in document["mutants"]:
        given = mutant["misconception"]
        keys = given if isinstance(given, list) else [] if given is None else [given]
        mutants[mutant["id"]] = (mutant["task"], tuple(mutant.get("may_cost", ())), [SENTENCES[key] for key in keys])
    return mutants


MUTANTS = _named_mutants()


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
    assert len(EXPECTED) >= 25
    assert set(EXPECTED) <= set(MUTANTS)   # each fixture is a named mutant, with its task and misconceptions


def check_fixture_result(name, failed, scores, misconceptions, changed, unsaid):
    """What a fixture's result must show, whether it came from the library or from the CLI's JSON:
    exactly the expected scenarios failed, each misconception named is one that truly describes the bug (and
    one is named), the bug costs points only in its own task (or a task it may cost, declared; an engine bug also
    where the scenario's control failed and says so: `unsaid` are the tasks it cost points in without that), and
    a change to the provided engine is named as such."""
    failing, changes = EXPECTED[name]
    task, may_cost, sentences = MUTANTS[name]
    assert sorted(failed) == sorted(failing)
    assert misconceptions and set(misconceptions) <= set(sentences), misconceptions
    for other in scores:
        if other != task and other not in may_cost:
            assert other not in unsaid, other           # a Task 1 bug leaves Task 2 full, and vice versa
    if task != "engine":
        assert scores[task][0] < scores[task][1]
    assert changed == changes
    if task == "engine":
        assert changed                                  # an engine edit is named as one


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_buggy_fixture_is_caught(name, assignment):
    result = _grade(BUGGY / f"{name}.py", assignment)
    failed = [s for s in result.scenarios if s.status is not Status.PASSED]
    check_fixture_result(name, [s.id for s in failed], {t.id: (t.score, t.max_score) for t in result.tasks},
                         [s.feedback.misconception for s in failed if s.feedback.misconception],
                         [c.name for c in result.provided_changes],
                         {s.task for s in failed if s.max_points > 0 and not s.feedback.control_failed})


def _reference_module():
    spec = importlib.util.spec_from_file_location("autodiff_reference_for_test", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_randomized_scenarios_reject_answers_for_other_inputs(assignment):
    """A hard-coded answer fails: what the reference observes under one seed fails the check under another.
    A scenario's control (the same program run with the engine only) is computed from the run's own inputs
    whatever the task code does, so the hard-coded answer is paired with the control of the other seed."""
    reference = _reference_module()
    randomized = [s for s in assignment.scenarios if s.code.make_inputs is not None]
    assert len(randomized) >= 6

    def observed(spec, inputs):   # as the grader would receive it: through the sandbox's encoding
        return decode(json.dumps(encode(spec.code.program(reference, **inputs))).encode())
    for spec in randomized:
        first, second = spec.code.inputs(1), spec.code.inputs(2)
        assert spec.code.inputs(1).keys() == first.keys()
        answer = observed(spec, first)
        spec.code.check_fn(answer, **first)                    # right for its own inputs
        if "control" in answer:
            answer = {**answer, "control": observed(spec, second)["control"]}
        with pytest.raises(Mismatch):
            spec.code.check_fn(answer, **second)               # wrong for the other seed's


def test_randomized_scenarios_pass_the_reference_under_another_seed(assignment):
    result = grade_submission(REFERENCE, assignment, seed=2, scope="all")
    assert result.score == 100
