"""Binary audio framing, protocol versions 1-3 (device-protocol.md §1.6).

v1: one raw Opus packet per WebSocket binary message.
v2: 16-byte header ``version u16 | type u16 | reserved u32 | timestamp_ms u32 | size u32`` (BE).
v3: 4-byte header ``type u8 | reserved u8 | size u16`` (BE).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from server.protocol.errors import FramingError

FRAME_OPUS = 0
FRAME_JSON = 1
_V2 = struct.Struct(">HHIII")
_V3 = struct.Struct(">BBH")
SUPPORTED_VERSIONS = (1, 2, 3)


@dataclass(frozen=True, slots=True)
class BinaryFrame:
    kind: int
    payload: bytes
    timestamp_ms: int = 0


def decode(version: int, data: bytes) -> BinaryFrame:
    if version == 1:
        return BinaryFrame(FRAME_OPUS, data)
    if version == 2:
        if len(data) < _V2.size:
            raise FramingError(f"v2 frame shorter than its {_V2.size}-byte header")
        _ver, kind, _res, ts, size = _V2.unpack_from(data)
        payload = data[_V2.size :]
        if size != len(payload):
            raise FramingError(f"v2 payload_size {size} but {len(payload)} bytes follow")
        return BinaryFrame(kind, payload, ts)
    if version == 3:
        if len(data) < _V3.size:
            raise FramingError(f"v3 frame shorter than its {_V3.size}-byte header")
        kind, _res, size = _V3.unpack_from(data)
        payload = data[_V3.size :]
        if size != len(payload):
            raise FramingError(f"v3 payload_size {size} but {len(payload)} bytes follow")
        return BinaryFrame(kind, payload)
    raise FramingError(f"unsupported protocol version {version}")


def encode(version: int, payload: bytes, timestamp_ms: int = 0, kind: int = FRAME_OPUS) -> bytes:
    if version == 1:
        return payload
    if version == 2:
        return _V2.pack(2, kind, 0, timestamp_ms & 0xFFFFFFFF, len(payload)) + payload
    if version == 3:
        if len(payload) > 0xFFFF:
            raise FramingError("v3 payload larger than 65535 bytes")
        return _V3.pack(kind, 0, len(payload)) + payload
    raise FramingError(f"unsupported protocol version {version}")
