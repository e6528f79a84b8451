"""The red team: a package, so that its conftest is ``redteam.conftest`` and never shadows the
suite's own ``conftest`` (from which other test modules import)."""
