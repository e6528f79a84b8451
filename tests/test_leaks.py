"""The release's leak check (grader.leaks) and its zip. Pure: texts in, leaks out."""

from __future__ import annotations

import io
import zipfile

from grader.leaks import find_leaks, secrets_of
from grader.release import zip_bytes

REFERENCE = '''def helper(v):
    return v * 2


def solve(x, y):
    """The task."""
    total = x + y
    if total > 10:
        total = helper(total)
    return total
'''
HANDOUT = '''def helper(v):
    return v * 2


def solve(x, y):
    """The task."""
    raise NotImplementedError("Task 1: implement solve")
'''
HIDDEN = '''from grader.scenario import scenario

def _shared(rng):
    return {"x": 1}


@scenario
def secret_case(mod):
    a = mod.solve(7, 8)
    b = mod.solve(1, 2)
    return {"a": a, "b": b}


@secret_case.check
def _(got):
    expect_close(got["a"], 30, what="solve(7, 8)")
'''


def secrets(solutions=()):
    return secrets_of([("secret_case", "solve on a case nobody sees")], ("hidden.py", HIDDEN),
                      ("ref.py", REFERENCE), ["solve"], list(solutions))


def leaks(files, solutions=()):
    return [str(leak) for leak in find_leaks([(name, text.encode()) for name, text in files], secrets(solutions))]


def test_the_handout_as_it_should_be_leaks_nothing():
    assert leaks([("mod.py", HANDOUT), ("README.md", "Write solve(x, y).\n")]) == []


def test_a_task_body_renamed_and_reformatted_is_found():
    copied = HANDOUT.replace('    raise NotImplementedError("Task 1: implement solve")\n',
                             "    s = (x +\n         y)   # add\n    if s > 10: s = helper(s)\n    return s\n")
    assert leaks([("mod.py", copied)]) == ["mod.py:7: leaks the body of solve of the reference (ref.py:7)"]


def test_a_task_body_pasted_into_another_function_is_found():
    pasted = HANDOUT + "\n\ndef later(p, q):\n    print('hi')\n    t = p + q\n    if t > 10:\n" \
                       "        t = helper(t)\n    return t\n"
    assert leaks([("mod.py", pasted)]) == ["mod.py:12: leaks the body of solve of the reference (ref.py:7)"]


def test_code_the_reference_provides_too_is_no_leak():
    tiny = REFERENCE.replace('    total = x + y\n    if total > 10:\n        total = helper(total)\n    return total\n',
                             "    return v * 2\n".replace("v", "x"))
    found = find_leaks([("mod.py", HANDOUT.encode())],
                       secrets_of([], None, ("ref.py", tiny), ["solve"], []))
    assert found == []   # `return x * 2` is helper's body too: the handout ships helper


def test_a_hidden_scenario_s_id_title_and_code_are_found():
    public = ("# see secret_case for the hard one\n"
              "def visible(m):\n    first = m.solve(7, 8)\n    second = m.solve(1, 2)\n"
              "    return {'a': first, 'b': second}\n")
    assert leaks([("scenarios.py", public), ("README.md", "It checks solve on a case nobody sees.\n")]) == [
        "scenarios.py:1: leaks the id of hidden scenario secret_case",
        "scenarios.py:3: leaks the program of a hidden scenario (hidden.py:8)",
        "README.md: leaks the title of hidden scenario secret_case ('solve on a case nobody sees')"]


def test_an_id_inside_a_longer_name_is_not_the_id():
    assert leaks([("scenarios.py", "def not_secret_case_at_all(m):\n    return 1\n")]) == []


def test_a_short_hidden_check_leaks_only_as_a_whole_body():
    check = 'expect_close(got["a"], 30, what="solve(7, 8)")'
    shared = f"def public_check(got):\n    x = 1\n    {check}\n"
    assert leaks([("scenarios.py", shared)]) == []
    assert leaks([("scenarios.py", f"def copy(result):\n    {check.replace('got', 'result')}\n")]) == [
        "scenarios.py:2: leaks the check of a hidden scenario (hidden.py:15)"]


def test_a_file_of_the_solutions_folder_is_found_even_reformatted():
    solutions = [("solutions/box/ref.py", REFERENCE.encode()), ("solutions/box/notes.txt", b"grading notes\n")]
    assert "extra.txt: leaks the file solutions/box/notes.txt of the solutions folder (the same bytes)" in \
        leaks([("extra.txt", "grading notes\n")], solutions)
    assert "mod.py: leaks the file solutions/box/ref.py of the solutions folder (the same code, reformatted)" in \
        leaks([("mod.py", "# mine\n" + REFERENCE.replace("    ", "  "))], solutions)


def test_the_zip_is_the_same_for_the_same_files():
    files = [("b.py", b"x = 1\n"), ("README.md", b"hi\n")]
    first, second = zip_bytes("box", files), zip_bytes("box", list(reversed(files)))
    assert first == second
    assert zipfile.ZipFile(io.BytesIO(first)).namelist() == ["box/README.md", "box/b.py"]
