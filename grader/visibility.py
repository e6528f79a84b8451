"""Who sees what: closed sets of values shared by every layer, and the rule on ``--hidden-visibility``
(a leaf module)."""

from __future__ import annotations

from enum import Enum


class Visibility(str, Enum):
    """A scenario's: public ones are in the folder students receive, hidden ones only the instructor's."""

    PUBLIC = "public"
    HIDDEN = "hidden"


class Scope(str, Enum):
    """Which scenarios a run grades: ``grader check`` the public ones, ``grader grade`` all of them."""

    PUBLIC = "public"
    ALL = "all"

    def includes(self, visibility: Visibility) -> bool:
        return self is Scope.ALL or visibility is Visibility.PUBLIC


class ShownTo(str, Enum):
    """When Gradescope shows a test to the student (its ``visibility`` values), in increasing openness."""

    HIDDEN = "hidden"
    AFTER_DUE_DATE = "after_due_date"
    AFTER_PUBLISHED = "after_published"
    VISIBLE = "visible"


DEFAULT_HIDDEN_SHOWN_TO = ShownTo.AFTER_PUBLISHED  # hidden scenarios' results, once grades are published


def hidden_visibility_problem(hidden_visibility: str, hidden_points: float) -> str | None:
    """Why ``hidden_visibility`` (a :class:`ShownTo` value) cannot be given to hidden scenarios worth
    ``hidden_points`` in all, or None. Gradescope shows the total to students unless a test waits
    for a date or for publication; a ``hidden`` test does not, so its points would show in the
    total at once (:mod:`grader.report.gradescope` says more)."""
    shown = tuple(level.value for level in ShownTo)
    if hidden_visibility not in shown:
        return f"hidden visibility must be one of {', '.join(shown)}; got {hidden_visibility!r}"
    if hidden_visibility == ShownTo.HIDDEN.value and hidden_points > 0:
        return (f"--hidden-visibility hidden would show students, before publication, a total that includes the "
                f"hidden scenarios' {hidden_points:g} points (Gradescope hides the total only while a test is "
                "after_due_date or after_published); use after_published (the default) or after_due_date")
    return None
