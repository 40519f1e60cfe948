"""Framing without a server: lines cut anywhere, several per chunk, CRLF, blank lines."""

from __future__ import annotations

import json
import math

import pytest

from ecsd_client._framing import LineDecoder, encode


def drain(decoder: LineDecoder) -> list[bytes]:
    lines = []
    while (line := decoder.pop()) is not None:
        lines.append(line)
    return lines


def test_encode_is_one_compact_utf8_line() -> None:
    data = encode({"method": "world.spawn_entity", "params": {"components": {"Name": {"name": "Zoë"}}}})
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert b" " not in data
    assert "Zoë".encode() in data
    assert json.loads(data) == {"method": "world.spawn_entity", "params": {"components": {"Name": {"name": "Zoë"}}}}


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_encode_refuses_what_json_cannot_say(value: float) -> None:
    with pytest.raises(ValueError):
        encode({"x": value})


def test_several_messages_in_one_chunk() -> None:
    d = LineDecoder()
    d.feed(b'{"id":1}\n{"id":2}\n{"id":3}\n')
    assert drain(d) == [b'{"id":1}', b'{"id":2}', b'{"id":3}']


def test_a_line_cut_at_every_byte() -> None:
    data = encode({"id": 1, "result": {"name": "Zoë", "list": list(range(20))}}) * 3
    d = LineDecoder()
    got = []
    for i in range(len(data)):
        d.feed(data[i : i + 1])  # a multi-byte UTF-8 character is cut too
        got += drain(d)
    assert [json.loads(line) for line in got] == [{"id": 1, "result": {"name": "Zoë", "list": list(range(20))}}] * 3
    assert d.pending_bytes == 0


def test_partial_line_waits_for_its_terminator() -> None:
    d = LineDecoder()
    d.feed(b'{"id":1}\n{"id"')
    assert drain(d) == [b'{"id":1}']
    assert d.pending_bytes == len(b'{"id"')
    d.feed(b':2}')
    assert drain(d) == []
    d.feed(b"\n")
    assert drain(d) == [b'{"id":2}']


def test_crlf_and_blank_lines() -> None:
    d = LineDecoder()
    d.feed(b'{"id":1}\r\n\r\n\n   \n{"id":2}\r')
    d.feed(b"\n")
    assert drain(d) == [b'{"id":1}', b'{"id":2}']


def test_pop_hands_out_one_line_at_a_time() -> None:
    d = LineDecoder()
    d.feed(b"a\nb\n")
    assert len(d) == 2
    assert d.pop() == b"a"
    assert len(d) == 1
