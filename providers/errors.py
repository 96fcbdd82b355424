"""Provider failures, classified once: transient (retry may help) or permanent."""

from __future__ import annotations

from typing import Literal

# unreachable: nothing answered (connection refused or reset, timeout); unavailable: it answered
# that it cannot serve now (5xx, 429); failed: it answered something unusable (4xx, garbage).
Cause = Literal["unreachable", "unavailable", "failed"]


class ProviderError(Exception):
    """An engine failed. ``transient`` says whether retrying later may succeed."""

    transient: bool = False

    def __init__(self, provider: str, message: str, cause: Cause = "failed") -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.message = message
        self.cause: Cause = cause


class TransientProviderError(ProviderError):
    transient = True


class PermanentProviderError(ProviderError):
    transient = False
