"""Lint and types: ruff over the repository and mypy over grader/, as configured in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
BIN = Path(sys.executable).parent


@pytest.mark.parametrize("command", [["ruff", "check", "."], ["mypy"]], ids=["ruff", "mypy"])
def test_the_code_is_clean(command):
    tool = BIN / command[0]
    assert tool.exists(), f"{command[0]} is part of the test extra: pip install -e '.[test]'"
    done = subprocess.run([str(tool), *command[1:]], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
