"""The sandbox: where student code runs (``child.py``) and how the grader drives it (``launcher.py``).

``child.py`` and the modules it imports by path (``framing``, ``encoding``, ``landlock``, ``proctree``) use only
the standard library, so the child never needs the ``grader`` package.
"""
