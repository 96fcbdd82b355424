"""Seeds 000 ("who said it") and 002 ("store one memory") walked line by line: every endpoint,
field, status code and exact error text they state, in the order they state it. Each test names
the seed and quotes (or translates) the line it checks. Details tested more deeply elsewhere
(tests/server/api/test_speakers.py, test_idempotency.py, test_seed_details.py) are walked here
too, so this one module answers "does Hearth do what the seeds say?"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from memory.registry import ApiKeys
from providers.embedder import UseEmbedder
from tests.server.api.conftest import Api, serve_api

FORM = {"Content-Type": "application/x-www-form-urlencoded"}  # what `curl -d` says


def error_of(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert body["type"] == "error"
    error: dict[str, Any] = body["error"]
    return error


async def count(api: Api, store: str = "alice") -> int:
    return api.store.count(store)  # type: ignore[arg-type]


# ---- seed 000: "谁说的" ------------------------------------------------------------------------


async def test_000_register_bob_once_then_store_and_ask_by_speaker(api: Api) -> None:
    """「add注册一次 Bob：POST /speakers」「用 speaker "Bob" 保存」「这条记忆现在属于 Bob：每次
    搜索返回它时都会这样标注」「用 speaker "Bob" 搜索。只返回 Bob 的话」"""
    registered = await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    assert registered["speaker"] == "Bob" and registered["status"] == "registered"
    bob = await api.ok(
        "POST",
        "store",
        {
            "user_id": "alice",
            "content": "Bob said the deadline moved to Tuesday",
            "metadata": {"speaker": "Bob"},
        },
    )
    me = await api.ok(
        "POST",
        "store",
        {
            "user_id": "alice",
            "content": "I promised the summary by Friday",
            "metadata": {"speaker": "me"},
        },
    )
    assert bob["status"].startswith("stored") and me["status"].startswith("stored")
    hits = await api.ok(
        "POST",
        "search",
        {"user_id": "alice", "query": "what did Bob say about the deadline?", "speaker": "Bob"},
    )
    # response { "memories": [ { "content": "...", "speaker": "Bob", ... } ] }
    assert [m["content"] for m in hits["memories"]] == ["Bob said the deadline moved to Tuesday"]
    assert hits["memories"][0]["speaker"] == "Bob"
    everyone = await api.ok("POST", "search", {"user_id": "alice", "query": "deadline summary"})
    assert {m["speaker"] for m in everyone["memories"]} == {"Bob", "me"}  # labelled on every read


async def test_000_me_needs_no_registration_and_never_counts(api: Api) -> None:
    """「"me" 永远无需注册也不计数」「"me" 永远不占说话者上限」"""
    stored = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "我答应周五前交摘要", "metadata": {"speaker": "me"}},
    )
    assert stored["status"].startswith("stored")
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed["count"] == 0 and listed["speakers"] == [] and listed["limit"] == 50


@pytest.mark.parametrize("spelling", ["Me", "ME", "mE"])
async def test_000_me_is_lower_case_only(api: Api, spelling: str) -> None:
    """「保留字且仅小写有效：speaker: "Me" 或 "ME" 不会被隐式转换，而是返回 400
    invalid_request_error」"""
    before = await count(api)
    stored = await api.call(
        "POST", "store", {"user_id": "alice", "content": "x", "metadata": {"speaker": spelling}}
    )
    registered = await api.call("POST", "speakers", {"user_id": "alice", "speaker": spelling})
    for answer in (stored, registered):
        assert answer.status_code == 400
        assert error_of(answer)["type"] == "invalid_request_error"
    assert await count(api) == before


async def test_000_past_the_limit_registration_is_refused_verbatim(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    """「超限注册返回 400 invalid_request_error，错误体带 speaker_limit: 50」
    {"type":"error","error":{"type":"invalid_request_error","message":"This store already has 50
    registered speakers, ...","speaker_limit":50}}"""
    async for base_url, _ in serve_api(tmp_path, redis, embedder):
        key, _ = await ApiKeys(redis).create("ws", ["*"])
        async with httpx.AsyncClient(
            base_url=f"{base_url}/api/v1/memory", headers={"X-API-Key": key}
        ) as c:
            for n in range(50):
                ok = await c.post("/speakers", json={"user_id": "default", "speaker": f"p{n}"})
                assert ok.status_code == 200
            refused = await c.post("/speakers", json={"user_id": "default", "speaker": "p50"})
            stored = await c.post(
                "/store",
                json={"user_id": "default", "content": "今天买了菜", "metadata": {"speaker": "p7"}},
            )
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["type"] == "invalid_request_error" and error["speaker_limit"] == 50
    assert error["message"].startswith("This store already has 50 registered speakers, ")
    assert stored.status_code == 200  # 「store 调用绝不会返回上限错误」


async def test_000_store_with_an_unregistered_name_is_400_and_stores_nothing(api: Api) -> None:
    """{"type":"error","error":{"type":"invalid_request_error","message":"speaker 'Bob' is not
    registered in this store. Register it first: ...","speaker":"Bob"}}"""
    before = await count(api)
    refused = await api.call(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob 说了一件事", "metadata": {"speaker": "Bob"}},
    )
    assert refused.status_code == 400
    error = error_of(refused)
    assert error["type"] == "invalid_request_error" and error["speaker"] == "Bob"
    assert error["message"].startswith(
        "speaker 'Bob' is not registered in this store. Register it first: "
    )
    assert await count(api) == before


async def test_000_search_filtered_by_an_unregistered_name_is_404(api: Api) -> None:
    """{"type":"error","error":{"type":"not_found_error","message":"speaker 'Bob' is not
    registered in this store.","speaker":"Bob"}}"""
    for path, body in (("search", {"query": "deadline"}), ("by-speaker", {})):
        refused = await api.call("POST", path, {"user_id": "alice", "speaker": "Bob", **body})
        assert refused.status_code == 404
        assert error_of(refused) == {
            "type": "not_found_error",
            "message": "speaker 'Bob' is not registered in this store.",
            "speaker": "Bob",
        }


async def test_000_supersede_keeps_the_speaker_forget_removes_it_with_the_memory(
    api: Api,
) -> None:
    """「supersede 保留说话者，forget 一并删除」"""
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    stored = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob 喜欢喝乌龙茶", "metadata": {"speaker": "Bob"}},
    )
    changed = await api.ok(
        "POST",
        "supersede",
        {"user_id": "alice", "memory_id": stored["id"], "content": "Bob 现在改喝红茶了"},
    )
    assert changed["memory"]["speaker"] == "Bob"
    await api.ok("POST", "forget", {"user_id": "alice", "memory_id": changed["id"]})
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed["speakers"][0]["memories"] == 0


async def test_000_names_are_unicode_normalised_exact_and_at_most_80(api: Api) -> None:
    """「さくら、Иван、하늘 都是有效的说话者」「匹配在去空格和 Unicode 规范化后完全一致，因此 Bob 和
    bob 是两个人」「名字上限 80 个字符」"""
    for name in ("さくら", "Иван", "하늘", "Bob", "bob"):
        assert (await api.ok("POST", "speakers", {"user_id": "alice", "speaker": name}))[
            "status"
        ] == "registered"
    padded = await api.ok("POST", "speakers", {"user_id": "alice", "speaker": " Bob "})
    assert padded["status"] == "exists"
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Jose\u0301"})
    assert (await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Jos\u00e9"}))[
        "status"
    ] == "exists"
    assert (
        await api.call("POST", "speakers", {"user_id": "alice", "speaker": "x" * 81})
    ).status_code == 400
    assert (
        await api.call("POST", "speakers", {"user_id": "alice", "speaker": "x" * 80})
    ).status_code == 200


async def test_000_a_write_close_in_meaning_is_a_duplicate_with_a_note(api: Api) -> None:
    """「与已存记忆语义足够接近的写入会被丢弃……返回 status "duplicate" 和明确的 note，不保存任何
    内容，也不附加说话者」「仅在某个细节上不同于既有记忆的新事实（"花生过敏"之后的"甲壳类过敏"）
    同样会被丢弃」"""
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    await api.ok("POST", "store", {"user_id": "alice", "content": "我对花生过敏"})
    before = await count(api)
    again = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "我对花生过敏。", "metadata": {"speaker": "Bob"}},
    )
    detail = await api.ok("POST", "store", {"user_id": "alice", "content": "我对甲壳类过敏"})
    for answer in (again, detail):
        assert answer["status"] == "duplicate" and answer["id"] == "" and answer["note"]
    assert "Bob" in again["note"]  # the dropped speaker tag is named
    assert await count(api) == before
    bob = await api.ok("POST", "by-speaker", {"user_id": "alice", "speaker": "Bob"})
    assert bob["memories"] == []  # no speaker attached to the existing memory


async def test_000_attribution_comes_from_the_speaker_record_not_the_text(api: Api) -> None:
    """「存入正文里完全没有名字的记忆，再按人回忆。归属来自说话者记录而不是文字匹配」"""
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "さくら"})
    await api.ok(
        "POST",
        "store",
        {
            "user_id": "alice",
            "content": "明天上午十点去牙医那里复诊",
            "metadata": {"speaker": "さくら"},
        },
    )
    await api.ok("POST", "store", {"user_id": "alice", "content": "周末想去海边看日出"})
    said = await api.ok("POST", "by-speaker", {"user_id": "alice", "speaker": "さくら"})
    assert [m["content"] for m in said["memories"]] == ["明天上午十点去牙医那里复诊"]
    found = await api.ok(
        "POST", "search", {"user_id": "alice", "query": "牙医", "speaker": "さくら"}
    )
    assert [m["content"] for m in found["memories"]] == ["明天上午十点去牙医那里复诊"]


async def test_000_get_speakers_lists_counts_and_the_limit(api: Api) -> None:
    """GET /speakers → { "user_id": "alice", "speakers": [ { "speaker": "Bob", "memories": 2,
    "created_at": "2026-07-10T04:20:39Z" } ], "count": 1, "limit": 50 } — also sent as
    ``curl -X GET -d '{"user_id":"alice"}'``."""
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    for text in ("Bob 说截止日期推迟到周二", "Bob 下周要出差去上海"):
        await api.ok(
            "POST", "store", {"user_id": "alice", "content": text, "metadata": {"speaker": "Bob"}}
        )
    by_query = await api.ok("GET", "speakers", params={"user_id": "alice"})
    by_body = await api.client.request(
        "GET",
        "/api/v1/memory/speakers",
        content=b'{"user_id":"alice"}',
        headers={"X-API-Key": api.workspace},
    )
    assert by_body.status_code == 200 and by_body.json() == by_query
    assert by_query["user_id"] == "alice" and by_query["count"] == 1 and by_query["limit"] == 50
    [bob] = by_query["speakers"]
    assert bob["speaker"] == "Bob" and bob["memories"] == 2
    assert bob["created_at"].endswith("Z") and "T" in bob["created_at"]


async def test_000_remove_speaker_keeps_the_memories_the_tag_goes(api: Api) -> None:
    """「移除只删除注册：那个人的记忆保留，只有名字标签消失」 (curl -X DELETE … -d body)"""
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    stored = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob 下周三去体检", "metadata": {"speaker": "Bob"}},
    )
    removed = await api.client.request(
        "DELETE",
        "/api/v1/memory/speakers",
        content=b'{"user_id":"alice","speaker":"Bob"}',
        headers={"X-API-Key": api.workspace, **FORM},
    )
    assert removed.status_code == 200 and removed.json()["status"] == "removed"
    found = await api.ok("POST", "search", {"user_id": "alice", "query": "体检"})
    [memory] = [m for m in found["memories"] if m["id"] == stored["id"]]
    assert memory["speaker"] is None
    gone = await api.call("POST", "by-speaker", {"user_id": "alice", "speaker": "Bob"})
    assert gone.status_code == 404


async def test_000_by_speaker_is_newest_first_with_chunks_and_a_cursor(api: Api) -> None:
    """「by_speaker 无需查询词即可返回某个人说过的内容，按时间由新到旧。"me" 返回助手自己的话」
    fields: memories, chunks (= points_to_delete), next_before + next_skip_ids (both sent back);
    ``curl -X POST …/by-speaker -d '{…,"limit":50}'`` (no Content-Type)."""
    texts = ["我答应周一交报告", "我答应周二买牛奶", "我答应周三修电脑"]
    for text in texts:
        await api.ok(
            "POST", "store", {"user_id": "alice", "content": text, "metadata": {"speaker": "me"}}
        )
    first = await api.client.post(
        "/api/v1/memory/by-speaker",
        content=b'{"user_id":"alice","speaker":"me","limit":2}',
        headers={"X-API-Key": api.workspace, **FORM},
    )
    page = first.json()
    assert first.status_code == 200
    assert [m["content"] for m in page["memories"]] == texts[::-1][:2]
    assert [c["id"] for c in page["chunks"]] == page["points_to_delete"]
    assert {c["memory_id"] for c in page["chunks"]} == {m["id"] for m in page["memories"]}
    rest = await api.ok(
        "POST",
        "by-speaker",
        {
            "user_id": "alice",
            "speaker": "me",
            "limit": 2,
            "next_before": page["next_before"],
            "next_skip_ids": page["next_skip_ids"],
        },
    )
    assert [m["content"] for m in rest["memories"]] == texts[:1]
    assert rest["next_before"] is None


async def test_000_memories_stored_without_a_speaker_never_come_from_by_speaker(api: Api) -> None:
    """「存储时未指定说话人的记忆可以通过检索找到，但永远无法通过 by_speaker 取得，包括在 "me"
    下」"""
    stored = await api.ok("POST", "store", {"user_id": "alice", "content": "家里的猫叫年糕"})
    found = await api.ok("POST", "search", {"user_id": "alice", "query": "猫叫什么"})
    assert stored["id"] in [m["id"] for m in found["memories"]]
    mine = await api.ok("POST", "by-speaker", {"user_id": "alice", "speaker": "me"})
    assert mine["memories"] == []


async def test_000_expand_is_a_passage_without_a_speaker_label(api: Api) -> None:
    """「会话段落（expand）是多条记忆的合成，因此不带标签；speaker 过滤总是返回原子级、带标签的
    记忆」"""
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    stored = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob 周五请假", "metadata": {"speaker": "Bob"}},
    )
    why = await api.ok("POST", "expand", {"user_id": "alice", "memory_id": stored["id"]})
    assert "speaker" not in why  # the passage itself carries no label
    assert why["memory"]["speaker"] == "Bob"  # the atomic memory keeps it


# ---- seed 002: "Store one memory" -------------------------------------------------------------


async def test_002_post_store_with_x_api_key(api: Api) -> None:
    """post /api/v1/memory/store · Auth: API key in header X-API-Key · Example response
    {"status": "stored (1 chunks)"} · id · "match on the prefix" """
    stored = await api.ok("POST", "store", {"user_id": "alice", "content": "我每周四晚上练吉他"})
    assert stored["status"] == "stored (1 chunks)" and stored["id"]
    missing = await api.client.post(
        "/api/v1/memory/store", json={"user_id": "alice", "content": "x"}
    )
    assert missing.status_code == 401 and error_of(missing)["type"] == "authentication_error"


async def test_002_user_id_rules_default_store_and_case(api: Api) -> None:
    """「Stores are explicit: create one first or use the built-in "default"」「1-64 ASCII
    letters, digits, ., _ or -, starting with a letter or digit」「Ids that differ only by case
    name one store」「user_id required」「content required」"""
    built_in = await api.ok("POST", "store", {"user_id": "default", "content": "默认库里的一条"})
    assert built_in["status"].startswith("stored")
    unknown = await api.call("POST", "store", {"user_id": "never-made", "content": "x"})
    assert unknown.status_code == 404 and error_of(unknown)["type"] == "not_found_error"
    upper = await api.ok("POST", "store", {"user_id": "ALICE", "content": "大写的库名也是 alice"})
    found = await api.ok("POST", "search", {"user_id": "alice", "query": "大写的库名"})
    assert upper["id"] in [m["id"] for m in found["memories"]]
    for bad in ("-x", ".x", "a" * 65, "a b", "café"):
        refused = await api.call("POST", "store", {"user_id": bad, "content": "x"})
        assert refused.status_code == 400, bad
    for body in ({"content": "x"}, {"user_id": "alice"}):
        assert (await api.call("POST", "store", body)).status_code == 400


async def test_002_a_duplicate_has_an_empty_id_and_a_note_for_the_dropped_tag(api: Api) -> None:
    """「id: Empty when status is "duplicate"」「note: Present when something non-fatal was
    dropped (e.g. a speaker tag on a duplicate)」"""
    await api.ok("POST", "store", {"user_id": "alice", "content": "女儿对芒果过敏"})
    again = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "女儿对芒果过敏", "metadata": {"speaker": "me"}},
    )
    assert again["status"] == "duplicate" and again["id"] == ""
    assert "speaker tag 'me' was not attached" in again["note"]


WRITES: list[tuple[str, str, dict[str, Any], dict[str, Any]]] = [
    (
        "POST",
        "store",
        {"user_id": "alice", "content": "周六上午带孩子去游泳"},
        {"user_id": "alice", "content": "周日下午去超市买水果"},
    ),
    (
        "POST",
        "store-turn",
        {"user_id": "alice", "user": "我下个月去成都出差"},
        {"user_id": "alice", "user": "我明年想学钢琴"},
    ),
    (
        "POST",
        "bulk-store",
        {"user_id": "alice", "items": [{"content": "阳台的花每周浇两次"}]},
        {"user_id": "alice", "items": [{"content": "冰箱里还有两盒酸奶"}]},
    ),
    ("POST", "collection", {"user_id": "bob-store"}, {"user_id": "carol-store"}),
    ("DELETE", "collection", {"user_id": "bob-store"}, {"user_id": "alice"}),
    (
        "POST",
        "speakers",
        {"user_id": "alice", "speaker": "Dana"},
        {"user_id": "alice", "speaker": "Erin"},
    ),
    (
        "DELETE",
        "speakers",
        {"user_id": "alice", "speaker": "Dana"},
        {"user_id": "alice", "speaker": "Erin"},
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "other"), WRITES, ids=[f"{m} {p}" for m, p, _, _ in WRITES]
)
async def test_002_idempotency_key_on_every_listed_write(
    api: Api, method: str, path: str, body: dict[str, Any], other: dict[str, Any]
) -> None:
    """「Accepted on the writes: store, store-turn, bulk-store, supersede, forget, POST and DELETE
    collection, POST and DELETE speakers, DELETE image」「a repeat gets the first 2xx response
    again, with Idempotent-Replayed: true」「the same key with a different body answers 422」
    (supersede, forget: below; DELETE image: tests/server/test_vision.py)"""
    if method == "DELETE":  # what it deletes must exist first
        for target in (body, other):
            await api.call("POST", path, target)
    headers = {"Idempotency-Key": f"seed-002:{method}:{path}"}
    first = await api.call(method, path, body, headers=headers)
    again = await api.call(method, path, body, headers=headers)
    assert first.is_success, first.text
    assert again.status_code == first.status_code and again.json() == first.json()
    assert again.headers["Idempotent-Replayed"] == "true"
    reused = await api.call(method, path, other, headers=headers)
    assert reused.status_code == 422, reused.text
    assert error_of(reused)["type"] == "invalid_request_error"


async def test_002_supersede_and_forget_replay_and_a_read_ignores_the_key(api: Api) -> None:
    stored = await api.ok("POST", "store", {"user_id": "alice", "content": "车停在B2层"})
    for path, body in (
        ("supersede", {"user_id": "alice", "memory_id": stored["id"], "content": "车停在B3层"}),
        ("forget", {"user_id": "alice", "all": True}),
    ):
        headers = {"Idempotency-Key": f"seed-002:{path}"}
        first = await api.call("POST", path, body, headers=headers)
        again = await api.call("POST", path, body, headers=headers)
        assert first.status_code == 200 and again.json() == first.json()
        assert again.headers["Idempotent-Replayed"] == "true"
    headers = {"Idempotency-Key": "seed-002:read"}
    reads = [
        await api.call("POST", "search", {"user_id": "alice", "query": q}, headers=headers)
        for q in ("车", "停车")
    ]
    assert all(r.status_code == 200 and "Idempotent-Replayed" not in r.headers for r in reads)


async def test_002_only_a_2xx_is_kept(api: Api) -> None:
    """「Only a 2xx is kept, so a call that failed can be sent again at once」"""
    headers = {"Idempotency-Key": "seed-002:failed-first"}
    body = {"user_id": "alice", "content": "Eve 说周五开会", "metadata": {"speaker": "Eve"}}
    refused = await api.call("POST", "store", body, headers=headers)
    assert refused.status_code == 400
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Eve"})
    stored = await api.call("POST", "store", body, headers=headers)
    assert stored.status_code == 200 and "Idempotent-Replayed" not in stored.headers


async def test_002_models_retired_410_sunset_and_collection_delete_under_any_model(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    """「A retired model answers 410 with error.type gone_error and error.code 0, except on DELETE
    /api/v1/memory/collection」「a model scheduled to retire names the day in a Sunset header
    (RFC 8594) on every answer it serves, the same date GET /api/v1/models lists as
    retires_at」"""
    models = [{"id": "old", "retires_at": "2020-01-01"}, {"id": "soon", "retires_at": "2099-12-31"}]
    async for base_url, _ in serve_api(tmp_path, redis, embedder, models=models):
        key, _ = await ApiKeys(redis).create("ws", ["*"])
        async with httpx.AsyncClient(base_url=base_url) as c:
            old = {"X-API-Key": key, "X-WOS-Model": "old"}
            soon = {"X-API-Key": key, "X-WOS-Model": "soon"}
            gone = await c.post(
                "/api/v1/memory/store", json={"user_id": "default", "content": "x"}, headers=old
            )
            deleted = await c.request(
                "DELETE", "/api/v1/memory/collection", json={"user_id": "default"}, headers=old
            )
            listed = await c.get("/api/v1/models", headers=soon)
            served = await c.post(
                "/api/v1/memory/search", json={"user_id": "default", "query": "x"}, headers=soon
            )
    assert gone.status_code == 410
    assert error_of(gone)["type"] == "gone_error" and error_of(gone)["code"] == 0
    assert deleted.status_code == 200
    retires = {m["id"]: m["retires_at"] for m in listed.json()["models"]}
    assert retires["soon"].startswith("2099-12-31")
    assert served.headers["Sunset"] == "Thu, 31 Dec 2099 00:00:00 GMT"
    assert listed.headers["Sunset"] == served.headers["Sunset"]
