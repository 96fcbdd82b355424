"""Device credentials: who is connecting, and is their token genuine (device-protocol.md §1.1).

Token format matches the reference server so firmware handles it unchanged:
``<base64url_nopad(HMAC-SHA256(key, "<client_id>|<device_id>|<ts>"))>.<ts>`` with ``ts`` the unix
second the token was minted. We add an expiry check (``auth.token_ttl_days``) and a bound on
clock skew for tokens from the future.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from enum import Enum
from typing import NewType
from urllib.parse import parse_qs, urlsplit

DeviceId = NewType("DeviceId", str)
ClientId = NewType("ClientId", str)

MAC_PATTERN = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
MAX_CLOCK_SKEW_S = 300


class AuthFailure(Enum):
    """Why a handshake was refused; the value is the reason given to the device."""

    MISSING_DEVICE_ID = "missing Device-Id header (or device-id query parameter)"
    BAD_DEVICE_ID = "Device-Id must be a MAC address like aa:bb:cc:dd:ee:ff"
    MISSING_CLIENT_ID = "missing Client-Id header (or client-id query parameter)"
    MISSING_TOKEN = "missing Authorization: Bearer <token>"
    MALFORMED_TOKEN = "malformed token"
    BAD_SIGNATURE = "token is not valid for this device"
    EXPIRED = "token expired; fetch a new one from the OTA endpoint"
    NOT_APPROVED = "this device (Device-Id and Client-Id) is not approved, or was revoked"


class AuthError(Exception):
    def __init__(self, failure: AuthFailure) -> None:
        super().__init__(failure.value)
        self.failure = failure


@dataclass(frozen=True, slots=True)
class DeviceCredentials:
    device_id: DeviceId
    client_id: ClientId
    token: str | None
    protocol_version: int


def normalise_mac(raw: str) -> str:
    return raw.strip().lower().replace("-", ":")


def credentials_from_request(path: str, headers: dict[str, str]) -> DeviceCredentials:
    """Headers first (case-insensitive), then the query-string fallback browsers use (§1.1)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    query = {k.lower(): v[0] for k, v in parse_qs(urlsplit(path).query).items() if v}
    device = lowered.get("device-id") or query.get("device-id")
    if not device:
        raise AuthError(AuthFailure.MISSING_DEVICE_ID)
    device = normalise_mac(device)
    if not MAC_PATTERN.match(device):
        raise AuthError(AuthFailure.BAD_DEVICE_ID)
    client = (lowered.get("client-id") or query.get("client-id") or "").strip()
    if not client:
        raise AuthError(AuthFailure.MISSING_CLIENT_ID)
    authorization = lowered.get("authorization") or query.get("authorization") or ""
    token = authorization.split(" ", 1)[1].strip() if " " in authorization else authorization
    try:
        version = int(lowered.get("protocol-version", "1"))
    except ValueError:
        version = 1
    return DeviceCredentials(DeviceId(device), ClientId(client), token or None, version)


class TokenAuthority:
    """Mints and verifies device tokens with one HMAC key."""

    def __init__(self, key: bytes, ttl_s: float) -> None:
        if len(key) < 16:
            raise ValueError("auth key must be at least 16 bytes")
        self._key = key
        self._ttl_s = ttl_s

    def _signature(self, client_id: str, device_id: str, ts: int) -> str:
        message = f"{client_id}|{device_id}|{ts}".encode()
        digest = hmac.new(self._key, message, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def mint(self, device_id: str, client_id: str, now: float) -> str:
        ts = int(now)
        return f"{self._signature(client_id, normalise_mac(device_id), ts)}.{ts}"

    def verify(self, creds: DeviceCredentials, now: float) -> None:
        if not creds.token:
            raise AuthError(AuthFailure.MISSING_TOKEN)
        signature, _, ts_text = creds.token.rpartition(".")
        # ASCII only: str.isdigit() accepts 「²」, which int() refuses (a 500, not a 401)
        if not signature or not creds.token.isascii() or not ts_text.isdigit():
            raise AuthError(AuthFailure.MALFORMED_TOKEN)
        ts = int(ts_text)
        expected = self._signature(creds.client_id, creds.device_id, ts)
        if not hmac.compare_digest(expected.encode(), signature.encode()):
            raise AuthError(AuthFailure.BAD_SIGNATURE)
        if ts > now + MAX_CLOCK_SKEW_S or now - ts > self._ttl_s:
            raise AuthError(AuthFailure.EXPIRED)
