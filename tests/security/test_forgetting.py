"""Issue 20, medium: forgetting is complete — ``forget all`` leaves none of the person's words in
the transcript archive, the write checkpoints, the turn traces, the conflict log, the retag set
or the dead letters (real Redis, real Qdrant Edge, the real API on loopback)."""

from __future__ import annotations

import orjson
from redis.asyncio import Redis

from config import keys
from server.device.session_end import record_payload
from tests.server.api.conftest import Api
from tests.workers.test_session_jobs import record
from workers.failures import DeadLetters

WORDS = "我老婆对海鲜过敏，尤其是虾"


async def test_forget_all_leaves_no_copy_of_what_was_said(api: Api, redis: Redis) -> None:
    await api.ok("POST", "store", {"user_id": "alice", "content": WORDS})
    said = record("s-alice")  # person "alice", the same words
    payload = record_payload(said)
    await redis.lpush(keys.transcripts("alice"), orjson.dumps(payload))
    await redis.hset(keys.write_checkpoint("s-alice"), "facts", orjson.dumps([WORDS]))
    await redis.rpush(keys.turn_traces("s-alice"), orjson.dumps({"heard": WORDS}))
    await redis.lpush(keys.conflicts("alice"), orjson.dumps({"stored": WORDS}))
    await redis.sadd(keys.retag("alice"), "some-id")
    await redis.sadd(keys.recue("alice"), "some-id")
    failed = {**payload, "session_id": "s-alice-2"}
    await DeadLetters(redis).add("s-alice-2", failed, "boom", "permanent", 1)
    await DeadLetters(redis).add("s-bob", {**payload, "person": "bob"}, "boom", "permanent", 1)

    gone = await api.ok("POST", "forget", {"user_id": "alice", "all": True})
    assert gone["status"] == "forgotten" and gone["deleted"] == 1
    for key in (keys.transcripts("alice"), keys.write_checkpoint("s-alice"),
                keys.turn_traces("s-alice"), keys.conflicts("alice"), keys.retag("alice"),
                keys.recue("alice"), keys.write_checkpoint("s-alice-2")):  # fmt: skip
        assert not await redis.exists(key), key
    left = [d.job_id for d in await DeadLetters(redis).all()]
    assert "s-alice-2" not in left and "s-bob" in left  # only alice's
    found = await api.ok("POST", "search", {"user_id": "alice", "query": "海鲜过敏"})
    assert "海鲜" not in orjson.dumps(found).decode()
