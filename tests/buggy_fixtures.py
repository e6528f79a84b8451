"""The buggy fixtures as files, made once per test session from the edits in fixtures/make_buggy.py."""

import atexit
import importlib.util
import shutil
import tempfile
from pathlib import Path

_spec = importlib.util.spec_from_file_location("make_buggy", Path(__file__).parent / "fixtures" / "make_buggy.py")
make_buggy = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_buggy)

_folder = Path(tempfile.mkdtemp(prefix="grader-buggy-"))
atexit.register(shutil.rmtree, _folder, ignore_errors=True)
BUGGY = make_buggy.write_buggy(_folder / "buggy")
