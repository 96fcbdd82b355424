"""The device server's memory engine: the core (memory.engine: embedder + store) with the read
path on top, built once per process."""

from __future__ import annotations

from dataclasses import dataclass

from config.settings import HearthSettings
from memory.engine import build_core, build_embedder, index_store
from memory.store import MemoryStore
from providers.embedder import Embedder
from server.memory.readpath import ReadPath

__all__ = ["MemoryEngine", "build_embedder", "build_memory"]


@dataclass
class MemoryEngine:
    embedder: Embedder
    store: MemoryStore
    read_path: ReadPath
    index_min_points: int = 0

    def index(self) -> None:
        index_store(self.store, self.index_min_points)

    def close(self) -> None:
        self.store.close()


def build_memory(settings: HearthSettings, embedder: Embedder | None = None) -> MemoryEngine:
    core = build_core(settings, embedder)
    read_path = ReadPath(core.embedder, core.store, settings.memory, settings.embedded_llm)
    return MemoryEngine(core.embedder, core.store, read_path, core.index_min_points)
