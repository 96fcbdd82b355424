"""Memory core fixtures: the household fixtures in a real Qdrant Edge shard in a temp folder,
with the real USE embedder (both processes' core; the read-path tests use them too)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.importer import import_file
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ZHANG = PersonId("zhang")
LI = PersonId("li")


@pytest.fixture(params=["appendable", "indexed"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: UseEmbedder
) -> Iterator[EdgeMemoryStore]:
    """The households in a fresh store (appendable float16 segment), and the same after
    ``index()`` (quantised copy, rescored): every read-path test runs against both."""
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", ZHANG, embedder, store)
    import_file(FIXTURES / "household_li.jsonl", LI, embedder, store)
    if request.param == "indexed":
        folded = store.index(1)
        assert folded is not None and store._shard.info().indexed_vectors_count == folded[0]
    yield store
    store.close()
