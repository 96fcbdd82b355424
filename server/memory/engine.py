"""Building the memory engines from settings: embedder + store + read path, once per process."""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from config.settings import HearthSettings
from memory.store import EdgeMemoryStore, MemoryStore
from providers.embedder import Embedder, OpenAIEmbedder, UseEmbedder
from server.memory.readpath import ReadPath

log = structlog.get_logger(__name__)


@dataclass
class MemoryEngine:
    embedder: Embedder
    store: MemoryStore
    read_path: ReadPath
    index_min_points: int = 0

    def index(self) -> None:
        """Embedded store only (a Qdrant server runs its own optimizer): fold pending vectors
        into indexed segments once ``memory.index_min_points`` of them have piled up."""
        if not isinstance(self.store, EdgeMemoryStore):
            return
        try:
            done = self.store.index(self.index_min_points)
        except Exception as exc:  # the engine raises bare Exceptions (e.g. a full disk)
            # an index only speeds searches up: every memory stays searchable without it
            log.error("memory.index_failed", error=str(exc))
            return
        if done is not None:
            log.info("memory.indexed", vectors=done[0], seconds=round(done[1], 2))

    def close(self) -> None:
        self.store.close()


def build_embedder(settings: HearthSettings) -> Embedder:
    m = settings.memory
    if m.embedder == "openai":
        if not m.embedding_base_url:
            from config.settings import SettingsError

            raise SettingsError("memory.embedding_base_url", "required for embedder openai")
        return OpenAIEmbedder(
            m.embedding_base_url,
            m.embedding_model,
            m.embedding_api_key.get_secret_value(),
            m.embedding_dim,
            settings.llm.timeout_s,
        )
    return UseEmbedder(threads=m.embedder_threads, precision=m.embedder_precision)


def build_memory(settings: HearthSettings, embedder: Embedder | None = None) -> MemoryEngine:
    embedder = embedder or build_embedder(settings)
    if settings.memory.store == "qdrant":
        from memory.qdrant_store import QdrantMemoryStore

        store: MemoryStore = QdrantMemoryStore.from_settings(settings, embedder.dim)
    else:
        store = EdgeMemoryStore(settings.resolve(settings.memory.store_path), embedder.dim)
    engine = MemoryEngine(
        embedder,
        store,
        ReadPath(embedder, store, settings.memory),
        settings.memory.index_min_points,
    )
    engine.index()  # before anything is served: it holds the store's write lock while it runs
    return engine
