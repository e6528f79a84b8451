"""SHA-256 for the digests recorded in results, without loading OpenSSL.

``hashlib`` loads OpenSSL's libcrypto on import, on the path of every ``grader check``;
CPython's own SHA-256 module gives the same digests and loads in a fraction of that. Falls back to
``hashlib`` where an interpreter lacks it (it is an implementation detail: ``_sha256`` up to
Python 3.11, ``_sha2`` from 3.12).
"""

from __future__ import annotations

import functools


def sha256(data: bytes = b""):
    """A SHA-256 hash object (``update``, ``hexdigest``), like ``hashlib.sha256(data)``."""
    return _implementation()(data)


@functools.cache
def _implementation():
    """Found once: a failed import is not cached, and a batch hashes every submission."""
    try:
        from _sha2 import sha256  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # Python 3.11
        except ImportError:
            from hashlib import sha256
    return sha256
