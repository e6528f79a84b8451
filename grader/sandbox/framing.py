"""Messages between the grader and its sandbox: a length header, then strict JSON; and code.

Both sides import this file: the sandbox child (a clean interpreter that must not import the
``grader`` package, so this module uses only the standard library) and the trusted grader. A
message on the wire is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON.
"""

from __future__ import annotations

import binascii
import json
import marshal
import signal
import struct

HEADER = struct.Struct(">I")
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
# Sent by the grader to a zygote's process group when a run's time is up, before the kill: the
# scenario process answers with a "where" message (its program's and the student's frames, plain
# text, at most WHERE_CHARS), the zygote ignores it.
WHERE_SIGNAL = signal.SIGUSR1
WHERE_CHARS = 4000


class ProtocolError(ValueError):
    """The bytes from the sandbox are not a well-formed, bounded message."""


# One encoder for every message: json.dumps with these options would build one per call, and in a
# scenario process every object touched on the way out costs a copied page (see encoding.encode()).
_COMPACT_JSON = json.JSONEncoder(allow_nan=False, separators=(",", ":"))


def frame(message: dict) -> bytes:
    """Serialise one message: strict JSON (no NaN) behind a length header."""
    body = _COMPACT_JSON.encode(message).encode("utf-8")
    return HEADER.pack(len(body)) + body


def pack_code(code) -> str:
    """A code object as text for a message from the grader to the sandbox (never the other way).

    marshal, like pickle, must only ever load trusted bytes: the sandbox loads what the grader
    compiled (the same interpreter, so the same format), and the grader never loads code at all."""
    return binascii.b2a_base64(marshal.dumps(code), newline=False).decode("ascii")


def unpack_code(text: str):
    """The code object :func:`pack_code` packed. In the sandbox only."""
    return marshal.loads(binascii.a2b_base64(text))


class FrameReader:
    """Cuts a byte stream into message bodies; never holds more than one bounded message.

    ``feed`` returns the complete bodies found so far. A declared length above
    ``max_bytes`` is reported once as a :class:`ProtocolError` and its bytes are skipped,
    so one oversize message does not corrupt the framing of the ones after it.
    """

    def __init__(self, max_bytes: int = MAX_MESSAGE_BYTES):
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._skip = 0

    def feed(self, data: bytes) -> list[bytes | ProtocolError]:
        out: list[bytes | ProtocolError] = []
        if self._skip:
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        self._buffer += data
        while len(self._buffer) >= HEADER.size:
            (length,) = HEADER.unpack_from(self._buffer)
            if length > self.max_bytes:
                out.append(ProtocolError(f"a message of {length:,} bytes (the limit is {self.max_bytes:,})"))
                available = len(self._buffer) - HEADER.size
                self._skip = max(0, length - available)
                del self._buffer[: HEADER.size + min(length, available)]
                continue
            if len(self._buffer) < HEADER.size + length:
                break
            out.append(bytes(self._buffer[HEADER.size: HEADER.size + length]))
            del self._buffer[: HEADER.size + length]
        return out
