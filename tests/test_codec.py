"""The codec between sandbox and grader (framing, encoding, decoding): what the sandbox may send, and
everything the grader refuses."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from grader.sandbox.decoding import decode
from grader.sandbox.encoding import MAX_DEPTH, decode_inputs, encode, raised_record
from grader.sandbox.framing import FrameReader, ProtocolError, frame
from grader.values import Opaque, Raised


def roundtrip(value):
    return decode(json.dumps(encode(value)).encode())


def test_plain_values_roundtrip():
    value = {"a": [None, True, 3, 2.5, "text"], "b": {"c": []}}
    assert roundtrip(value) == value


def test_arrays_roundtrip_as_float64_copies_with_shape():
    array = np.arange(6.0).reshape(2, 3)
    back = roundtrip(array)
    assert isinstance(back, np.ndarray) and back.dtype == np.float64 and back.shape == (2, 3)
    assert np.array_equal(back, array)
    assert roundtrip(np.array(2.0)).shape == ()


def test_inputs_decode_from_the_parsed_command_as_from_bytes():
    # The sandbox gets a scenario's inputs inside the grader's command, already parsed.
    inputs = {"x": np.arange(4.0), "k": 3, "bad": math.inf, "rows": [np.eye(2)]}
    parsed = json.loads(json.dumps(encode(inputs), allow_nan=False))
    back = decode_inputs(parsed)
    assert back["k"] == 3 and back["bad"] == math.inf
    assert isinstance(back["x"], np.ndarray) and np.array_equal(back["x"], inputs["x"])
    assert np.array_equal(back["rows"][0], np.eye(2))
    with pytest.raises(ProtocolError):
        decode_inputs({"x": {"__ndarray__": {"dtype": "object", "shape": [1], "data": [1]}}})


def test_non_finite_floats_are_tagged_not_literal():
    text = json.dumps(encode([math.nan, np.array([1.0, math.inf])]), allow_nan=False)
    back = decode(text.encode())
    assert math.isnan(back[0]) and back[1][1] == math.inf


def test_numpy_scalar_is_not_an_array():
    back = roundtrip(np.float64(1.5))
    assert isinstance(back, np.float64) and not isinstance(back, np.ndarray)


def test_exceptions_become_records():
    back = roundtrip(RuntimeError("backward through the graph a second time"))
    assert isinstance(back, Raised) and back.is_a("RuntimeError") and back.is_a("Exception")
    assert "second time" in back.message


def test_subclasses_and_objects_become_opaque_without_calling_their_methods():
    class Liar(float):
        def __repr__(self):
            raise AssertionError("must not be called")

        def __eq__(self, other):
            return True

    back = roundtrip([Liar(2.0), object()])
    assert all(isinstance(item, Opaque) for item in back)
    assert "2.0" in back[0].repr


def test_hostile_str_of_an_exception_is_survived():
    class Nasty(Exception):
        def __str__(self):
            raise RuntimeError("no")

    record = raised_record(Nasty())
    assert "raised RuntimeError" in record["__raised__"]["message"]


@pytest.mark.parametrize("body", [
    b'{"x": NaN}', b'{"x": Infinity}', b"[1e999]", b"not json", b"\xff\xfe",
    b'{"__ndarray__": {"dtype": "object", "shape": [1], "data": [1]}}',
    b'{"__ndarray__": {"dtype": "float64", "shape": [3], "data": [1, 2]}}',
    b'{"__ndarray__": {"dtype": "float64", "shape": [1], "data": ["x"]}}',
    b'{"__raised__": {"type": "E"}}',
    b'{"__float__": "1.0"}',
    b"[" * 10_000 + b"]" * 10_000,
    json.dumps(list(range(300_000))).encode(),
])
def test_malformed_or_oversized_messages_are_refused(body):
    with pytest.raises(ProtocolError):
        decode(body)


def test_depth_limit():
    value = []
    for _ in range(MAX_DEPTH + 5):
        value = [value]
    with pytest.raises(ProtocolError):
        decode(json.dumps(value).encode())


def test_frames_are_reassembled_from_any_chunking():
    stream = frame({"a": 1}) + frame({"b": [2, 3]})
    reader = FrameReader()
    bodies = []
    for byte in stream:
        bodies += reader.feed(bytes([byte]))
    assert [json.loads(b) for b in bodies] == [{"a": 1}, {"b": [2, 3]}]


def test_an_oversize_frame_is_reported_and_skipped():
    reader = FrameReader(max_bytes=100)
    huge = frame({"x": "y" * 1000})
    out = reader.feed(huge[:50]) + reader.feed(huge[50:] + frame({"ok": True}))
    assert isinstance(out[0], ProtocolError)
    assert json.loads(out[1]) == {"ok": True}


@pytest.mark.parametrize("dtype, travels_as", [
    ("float64", "float64"), (">f8", "float64"), ("int64", "int64"), (">i8", "int64"), ("bool", "bool"),
    ("float32", None), ("float16", None), ("longdouble", None), ("complex128", None), ("int32", None),
    ("uint64", None), ("uint8", None), ("object", None), ("U3", None), ("datetime64[s]", None)])
def test_only_float64_int64_and_bool_arrays_travel_as_arrays(dtype, travels_as):
    array = np.zeros(3, dtype=dtype)
    encoded = encode(array)
    if travels_as is None:
        assert set(encoded) == {"__opaque__"} and f"dtype {array.dtype}" in encoded["__opaque__"]["repr"]
    else:
        assert encoded["__ndarray__"]["dtype"] == travels_as
        back = roundtrip(array)
        assert back.dtype == travels_as and np.array_equal(back, array.astype(travels_as))


def test_a_frame_is_compact_strict_json_behind_its_length():
    data = frame({"kind": "result", "index": 3, "observations": [1.5, "é"]})
    body = data[4:]
    assert int.from_bytes(data[:4], "big") == len(body)
    assert body == b'{"kind":"result","index":3,"observations":[1.5,"\\u00e9"]}'
    with pytest.raises(ValueError):
        frame({"observations": math.nan})


def test_strings_from_the_sandbox_are_cut_and_keys_too():
    from grader.sandbox.encoding import MAX_STR
    long = "p" * (MAX_STR + 5000)
    back = decode(json.dumps({"text": long, long: 1, "raised": {"__raised__": {
        "type": "E" * 500, "message": long, "mro": ["E"], "traceback": long}}}).encode())
    assert back["text"] == "p" * MAX_STR + "... [5,000 more characters]"
    assert "p" * MAX_STR + "... [5,000 more characters]" in back
    raised = back["raised"]
    assert len(raised.type) == 200 and raised.message.endswith("[5,000 more characters]")
    assert raised.traceback.endswith("[5,000 more characters]")


def test_lone_surrogates_are_replaced_everywhere_so_any_writer_can_write():
    # "\ud800" is valid JSON, and a str that no UTF-8 writer accepts: it once ended every batch.
    body = (b'{"s": "a\\ud800b", "\\udfff": ["\\udcff"], "pair": "\\ud83d\\ude00",'
            b' "e": {"__raised__": {"type": "E\\ud800", "message": "m\\udc00", "mro": ["\\ud800"],'
            b' "traceback": "t\\udbff"}}, "o": {"__opaque__": {"type": "T\\ud800", "repr": "r\\ud800"}}}')
    back = decode(body)
    assert back["s"] == "a\ufffdb" and back["\ufffd"] == ["\ufffd"] and back["pair"] == "\U0001f600"
    assert back["e"].message == "m\ufffd" and back["e"].type == "E\ufffd" and back["e"].mro == ("\ufffd",)
    assert back["o"].repr == "r\ufffd"
    json.dumps(back["s"], ensure_ascii=False).encode("utf-8")   # strict: no error
