"""The grader's version: a leaf module, so that a module needing it (a result's ``grader_version``, a
worker's handshake) imports nothing else of the package. ``grader.__version__`` is this one."""

__version__ = "0.2.0"
