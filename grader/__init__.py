"""autodiff-grader: grade automatic-differentiation exercises safely and fast.

The library API (the CLI only wraps it)::

    from grader import load_assignment, grade_submission
    assignment = load_assignment("exercises/autodiff")
    result = grade_submission("autodiff.py", assignment, seed=1)
    print(result.score, result.max_score)

Heavy modules load lazily, so ``import grader`` stays cheap for the sandbox and the CLI.
"""

from grader.version import __version__

__all__ = ["__version__", "load_assignment", "grade_submission", "load_ipython_extension"]


def load_ipython_extension(ipython) -> None:
    """``%load_ext grader`` in Jupyter: the ``%grader check`` magic (see grader.notebook)."""
    from grader.notebook import load_ipython_extension as load
    load(ipython)


def __getattr__(name):
    if name == "load_assignment":
        from grader.loading import load_assignment
        return load_assignment
    if name == "grade_submission":
        from grader.runner import grade_submission
        return grade_submission
    raise AttributeError(name)
