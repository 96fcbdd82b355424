"""Memory fixtures: the real USE embedder and a real Qdrant Edge shard in a temp folder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from config.settings import load_settings
from providers.embedder import UseEmbedder
from server.memory.importer import import_file
from server.memory.readpath import ReadPath
from server.memory.schema import PersonId
from server.memory.store import EdgeMemoryStore

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ZHANG = PersonId("zhang")
LI = PersonId("li")


@pytest.fixture
def store(tmp_path: Path, embedder: UseEmbedder) -> Iterator[EdgeMemoryStore]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", ZHANG, embedder, store)
    import_file(FIXTURES / "household_li.jsonl", LI, embedder, store)
    yield store
    store.close()


@pytest.fixture
def read_path(store: EdgeMemoryStore, embedder: UseEmbedder) -> ReadPath:
    return ReadPath(embedder, store, load_settings().memory)
