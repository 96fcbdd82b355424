"""Building the memory core from settings, once per process: the embedder and the store (the
embedded Qdrant Edge shard, indexed at start, or a Qdrant server). The device server adds its
read path on top (``server.memory.engine``); the worker needs only this."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import structlog

from config.settings import HearthSettings, SettingsError
from memory.store import EdgeMemoryStore, MemoryStore
from providers.embedder import Embedder, OpenAIEmbedder, UseEmbedder

log = structlog.get_logger(__name__)


class MemoryParts(Protocol):
    """What a writer needs of a memory engine (the server's engine has a read path besides)."""

    @property
    def embedder(self) -> Embedder: ...

    @property
    def store(self) -> MemoryStore: ...

    def close(self) -> None: ...


@dataclass
class MemoryCore:
    embedder: Embedder
    store: MemoryStore
    index_min_points: int = 0

    def index(self) -> None:
        index_store(self.store, self.index_min_points)

    def close(self) -> None:
        self.store.close()


def index_store(store: MemoryStore, min_points: int) -> None:
    """Embedded store only (a Qdrant server runs its own optimizer): fold pending vectors into
    indexed segments once ``memory.index_min_points`` of them have piled up."""
    if not isinstance(store, EdgeMemoryStore):
        return
    try:
        done = store.index(min_points)
    except Exception as exc:  # the engine raises bare Exceptions (e.g. a full disk)
        # an index only speeds searches up: every memory stays searchable without it
        log.error("memory.index_failed", error=str(exc))
        return
    if done is not None:
        log.info("memory.indexed", vectors=done[0], seconds=round(done[1], 2))


def build_embedder(settings: HearthSettings) -> Embedder:
    m = settings.memory
    if m.embedder == "openai":
        if not m.embedding_base_url:
            raise SettingsError("memory.embedding_base_url", "required for embedder openai")
        return OpenAIEmbedder(
            m.embedding_base_url,
            m.embedding_model,
            m.embedding_api_key.get_secret_value(),
            m.embedding_dim,
            settings.llm.timeout_s,
        )
    return UseEmbedder(threads=m.embedder_threads, precision=m.embedder_precision)


def build_core(settings: HearthSettings, embedder: Embedder | None = None) -> MemoryCore:
    embedder = embedder or build_embedder(settings)
    if settings.memory.store == "qdrant":
        from memory.qdrant_store import QdrantMemoryStore

        store: MemoryStore = QdrantMemoryStore.from_settings(settings, embedder.dim)
    else:
        store = EdgeMemoryStore(settings.resolve(settings.memory.store_path), embedder.dim)
    core = MemoryCore(embedder, store, settings.memory.index_min_points)
    core.index()  # before anything is served: it holds the store's write lock while it runs
    return core
