"""Protocol errors and the one place they map to WebSocket close codes.

Exception tree::

    ProtocolError                      the device broke the protocol (close 1002 unless noted)
    ├── HelloExpected                  binary/JSON other than hello before the hello (§1.2)
    ├── HelloTimeout                   no hello within server.hello_timeout_s (close 1008)
    ├── BadHello                       hello with a transport other than "websocket"
    ├── FramingError                   a v2/v3 binary header that does not add up (§1.6)
    └── TooManyMalformed               repeated unparsable messages (close 1008)

Single malformed messages (bad JSON, no ``type``, unknown ``type``) are *not* exceptions: the
firmware logs and ignores them (§1.4), and so do we, counting them (``MalformedMessage`` event).
"""

from __future__ import annotations

from enum import IntEnum


class CloseCode(IntEnum):
    NORMAL = 1000
    GOING_AWAY = 1001
    PROTOCOL_ERROR = 1002
    POLICY_VIOLATION = 1008
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011
    # Application range (4000-4999): reasons a device cannot infer from the standard codes.
    IDLE_TIMEOUT = 4000
    SERVER_SHUTDOWN = 4001


class ProtocolError(Exception):
    close_code: CloseCode = CloseCode.PROTOCOL_ERROR

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class HelloExpected(ProtocolError):
    pass


class HelloTimeout(ProtocolError):
    close_code = CloseCode.POLICY_VIOLATION


class BadHello(ProtocolError):
    pass


class FramingError(ProtocolError):
    pass


class TooManyMalformed(ProtocolError):
    close_code = CloseCode.POLICY_VIOLATION
