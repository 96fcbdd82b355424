"""The server side of ``hearth bench api``: the memory API in its own process (uvicorn, the
embedded Qdrant Edge store, the real embedder). Run by the bench, never by hand; prints
``READY`` when listening."""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn
from redis.asyncio import Redis

from config.settings import load_settings
from memory.registry import Speakers
from server.api.app import ApiContext, build_api
from server.api.service import MemoryService
from server.logs import configure_logging
from server.memory.engine import build_memory


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    settings = load_settings(data_dir=args.data_dir)
    configure_logging("warning")
    memory = build_memory(settings)
    redis = Redis.from_url(args.redis_url)
    service = MemoryService(memory.embedder, memory.store, Speakers(redis), settings.api)
    app = build_api(ApiContext(redis, service, settings.api))
    config = uvicorn.Config(
        app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="off", loop="uvloop"
    )
    print("READY", flush=True)
    uvicorn.Server(config).run()
    memory.close()


if __name__ == "__main__":
    main()
