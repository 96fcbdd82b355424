"""Read-path fixtures: the core's household store (tests/memory) with the read path on top."""

from __future__ import annotations

import pytest

from config.settings import load_settings
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.readpath import ReadPath
from tests.memory.conftest import store  # noqa: F401 - the shared fixture


@pytest.fixture
def read_path(store: EdgeMemoryStore, embedder: UseEmbedder) -> ReadPath:  # noqa: F811
    return ReadPath(embedder, store, load_settings().memory)
