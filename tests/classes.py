"""Classes of submissions to grade as a batch, shared by the tests of shards, merges and clusters."""

from __future__ import annotations

import shutil
from pathlib import Path

from buggy_fixtures import BUGGY

ROOT = Path(__file__).parent.parent
ASSIGNMENT = ROOT / "exercises" / "autodiff"
REFERENCE = ROOT / "solutions" / "autodiff" / "autodiff.py"
STUB = ASSIGNMENT / "autodiff.py"


def mixed_class(folder: Path) -> Path:
    """Every kind of row, spread over the three shards of 3 (erin, hank, leo, olga / dave, kim / the
    rest); erin and olga hand in the same autodiff.py (one task on a cluster)."""
    folder.mkdir()
    shutil.copy(REFERENCE, folder / "alice.py")
    shutil.copy(BUGGY / "detach_returns_self.py", folder / "bob.py")
    (folder / "carol.py").write_text("def detach(self)\n    return self\n")         # a syntax error
    shutil.copy(STUB, folder / "dave.py")                                           # two submissions
    (folder / "dave").mkdir()
    shutil.copy(STUB, folder / "dave" / "autodiff.py")
    for twin in ("erin", "olga"):
        (folder / twin).mkdir()
        shutil.copy(REFERENCE, folder / twin / "autodiff.py")
    shutil.copy(STUB, folder / "hank.py")
    shutil.copy(BUGGY / "persistent_inverted.py", folder / "kim.py")
    shutil.copy(sorted(BUGGY.glob("*.py"))[0], folder / "leo.py")
    shutil.copy(REFERENCE, folder / "gina.py")
    (folder / "ivy").mkdir()                                                        # nothing inside
    (folder / ".DS_Store").write_bytes(b"\0")                                       # ignored, by rule
    return folder


def plain_class(folder: Path, count: int) -> Path:
    """``count`` submissions: the reference, the stub and the buggy fixtures in turn."""
    folder.mkdir()
    sources = [REFERENCE, STUB, *sorted(BUGGY.glob("*.py"))]
    for number in range(count):
        shutil.copy(sources[number % len(sources)], folder / f"s{number:03d}.py")
    return folder
