"""Building the memory engines from settings: embedder + store + read path, once per process."""

from __future__ import annotations

from dataclasses import dataclass

from config.settings import HearthSettings
from providers.embedder import Embedder, OpenAIEmbedder, UseEmbedder
from server.memory.readpath import ReadPath
from server.memory.store import EdgeMemoryStore, MemoryStore


@dataclass
class MemoryEngine:
    embedder: Embedder
    store: MemoryStore
    read_path: ReadPath

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
        from server.memory.qdrant_store import QdrantMemoryStore

        store: MemoryStore = QdrantMemoryStore.from_settings(settings, embedder.dim)
    else:
        store = EdgeMemoryStore(settings.resolve(settings.memory.store_path), embedder.dim)
    return MemoryEngine(embedder, store, ReadPath(embedder, store, settings.memory))
