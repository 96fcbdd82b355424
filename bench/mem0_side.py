"""mem0 1.0.x's own ``Memory.search`` on the memories and vectors a bench already has, loaded
without an LLM (its Qdrant store in local mode, the embedded option mem0 offers), with its
embedder replaced by ours so both sides search the same vectors."""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from providers.embedder import Embedder, Vector

INSERT_BATCH = 1000


class Mem0Side:
    def __init__(self, embedder: Embedder, folder: Path, collection: str = "bench") -> None:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", str(folder / "mem0home"))
        from mem0 import Memory as Mem0

        config = {
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": collection, "embedding_model_dims": embedder.dim,
                "path": str(folder / "mem0-qdrant"), "on_disk": False}},
            "llm": {"provider": "openai", "config": {"api_key": "unused-no-llm-call-in-search"}},
            "embedder": {"provider": "openai",
                         "config": {"api_key": "unused", "embedding_dims": embedder.dim}},
            "history_db_path": str(folder / "mem0-history.db"),
        }  # fmt: skip
        self.mem0 = Mem0.from_config(config)

        class Adapter:  # mem0's embedder interface over the same model
            def embed(self, text: str, memory_action: str | None = None) -> list[float]:
                return embedder.embed([text])[0]

        self.mem0.embedding_model = Adapter()

    def insert(self, user_id: str, texts: Sequence[str], vectors: Sequence[Vector] | Any) -> None:
        now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        for start in range(0, len(texts), INSERT_BATCH):
            batch = range(start, min(start + INSERT_BATCH, len(texts)))
            payloads = [
                {"data": texts[i], "user_id": user_id, "created_at": now,
                 "hash": hashlib.md5(texts[i].encode()).hexdigest()}
                for i in batch
            ]  # fmt: skip
            self.mem0.vector_store.insert(
                vectors=[list(map(float, vectors[i])) for i in batch],
                payloads=payloads,
                ids=[str(uuid.uuid4()) for _ in batch],
            )

    def search(self, user_id: str, question: str, limit: int = 5) -> list[str]:
        """The texts mem0's search returns, best first."""
        result: dict[str, Any] = self.mem0.search(question, user_id=user_id, limit=limit)
        return [str(r["memory"]) for r in result["results"]]
