"""The test tiers stay true: every file conftest.py names exists, and every marker it applies is
registered in pyproject.toml (an unregistered marker is a typo pytest only warns about)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import conftest

TESTS = Path(__file__).parent


def test_every_file_a_tier_names_exists():
    named = conftest.SANDBOX | conftest.SLOW | set(conftest.TIERS)
    assert sorted(name for name in named if not (TESTS / name).is_file()) == []


def test_every_marker_applied_is_registered():
    options = tomllib.loads((TESTS.parent / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":")[0] for line in options["markers"]}
    applied = {"sandbox", "slow", "redteam"} | {name for names in conftest.TIERS.values() for name in names}
    assert applied <= registered == {"slow", "sandbox", "browser", "cluster", "redteam"}
