"""Provider failures, classified once: transient (retry may help) or permanent."""

from __future__ import annotations


class ProviderError(Exception):
    """An engine failed. ``transient`` says whether retrying later may succeed."""

    transient: bool = False

    def __init__(self, provider: str, message: str) -> None:
        super().__init__(f"{provider}: {message}")
        self.provider = provider
        self.message = message


class TransientProviderError(ProviderError):
    transient = True


class PermanentProviderError(ProviderError):
    transient = False
