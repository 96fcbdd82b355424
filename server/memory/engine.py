"""The device server's memory engine: the core (memory.engine: embedder + store) with the read
path on top, built once per process."""

from __future__ import annotations

from dataclasses import dataclass

from config.settings import HearthSettings
from memory.engine import build_core, build_embedder, index_store
from memory.store import MemoryStore
from providers.embedder import Embedder
from server.memory.household import HouseholdNames
from server.memory.readpath import ReadPath

__all__ = ["MemoryEngine", "build_embedder", "build_memory"]


@dataclass
class MemoryEngine:
    embedder: Embedder
    store: MemoryStore
    read_path: ReadPath
    index_min_points: int = 0
    names: HouseholdNames | None = None  # the household's names and words, read in background

    def index(self) -> None:
        index_store(self.store, self.index_min_points)

    def close(self) -> None:
        self.store.close()


def build_memory(settings: HearthSettings, embedder: Embedder | None = None) -> MemoryEngine:
    core = build_core(settings, embedder)
    a = settings.asr
    names = HouseholdNames(
        core.store, a.household_names, word_limit=a.household_words if a.hotwords else 0
    )
    read_path = ReadPath(
        core.embedder, core.store, settings.memory, settings.embedded_llm, names.members
    )
    return MemoryEngine(core.embedder, core.store, read_path, core.index_min_points, names)
