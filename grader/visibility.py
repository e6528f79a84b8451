"""Who sees what: closed sets of values shared by every layer (a leaf module)."""

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
