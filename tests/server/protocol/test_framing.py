from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.protocol import framing
from server.protocol.errors import FramingError


@given(
    payload=st.binary(max_size=2000),
    ts=st.integers(0, 2**32 - 1),
    version=st.sampled_from([1, 2, 3]),
)
def test_roundtrip(payload: bytes, ts: int, version: int) -> None:
    frame = framing.decode(version, framing.encode(version, payload, ts))
    assert frame.payload == payload
    if version == 2:
        assert frame.timestamp_ms == ts


def test_v2_header_layout_is_big_endian() -> None:
    data = framing.encode(2, b"ab", timestamp_ms=0x01020304)
    assert data[:16] == bytes([0, 2, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 0, 0, 0, 2])


@given(data=st.binary(max_size=40))
def test_decoding_random_bytes_never_raises_anything_but_framing_error(data: bytes) -> None:
    for version in (2, 3):
        with contextlib.suppress(FramingError):
            framing.decode(version, data)


def test_short_frames_are_framing_errors() -> None:
    with pytest.raises(FramingError):
        framing.decode(2, b"\x00" * 5)
