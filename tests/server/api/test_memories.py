"""Seed 002 ("store one memory") and the rest of the memory rules: duplicates by meaning,
stores and keys, supersede, forget, models, limits and the error envelope."""

from __future__ import annotations

import datetime as dt

from tests.server.api.conftest import Api


async def test_store_answers_stored_prefix_then_duplicate_by_meaning(api: Api) -> None:
    first = await api.ok("POST", "store", {"user_id": "alice", "content": "我对花生过敏"})
    assert first["status"].startswith("stored") and first["id"]
    reworded = await api.ok("POST", "store", {"user_id": "alice", "content": "我对花生过敏。"})
    assert reworded["status"] == "duplicate" and reworded["id"] == ""
    assert first["id"] in reworded["note"]
    detail = await api.ok("POST", "store", {"user_id": "alice", "content": "我对甲壳类过敏"})
    assert detail["status"] == "duplicate"  # differs only in a detail: dropped (seed 000)
    other = await api.ok("POST", "store", {"user_id": "alice", "content": "我女儿叫小橙子"})
    assert other["status"].startswith("stored")
    assert api.store.count("alice") == 2


async def test_duplicate_with_speaker_notes_the_dropped_tag(api: Api) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    await api.ok("POST", "store", {"user_id": "alice", "content": "Bob lives in Berlin"})
    again = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob lives in Berlin!", "metadata": {"speaker": "Bob"}},
    )
    assert again["status"] == "duplicate" and "'Bob' was not attached" in again["note"]
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed["speakers"][0]["memories"] == 0


async def test_keys_reach_only_their_stores(api: Api) -> None:
    await api.ok("POST", "collection", {"user_id": "carol"})
    await api.ok("POST", "store", {"user_id": "carol", "content": "carol's secret recipe"})
    # alice's key: 404 for carol exactly as for a store that does not exist
    for store in ("carol", "nobody"):
        response = await api.call(
            "POST", "search", {"user_id": store, "query": "recipe"}, key=api.alice_key
        )
        assert response.status_code == 404
        assert response.json()["error"] == {
            "type": "not_found_error",
            "message": f"store '{store}' not found.",
            "user_id": store,
        }
    own = await api.call(
        "POST", "search", {"user_id": "ALICE", "query": "recipe"}, key=api.alice_key
    )
    assert own.status_code == 200 and own.json()["memories"] == []  # case: one store
    listed = await api.ok("GET", "collection", key=api.alice_key)
    assert [c["user_id"] for c in listed["collections"]] == ["alice"]
    create = await api.call("POST", "collection", {"user_id": "dave"}, key=api.alice_key)
    assert create.status_code == 404
    unauth = await api.call("POST", "search", {"user_id": "alice", "query": "x"}, key="hk_wrong")
    assert unauth.status_code == 401
    assert unauth.json()["error"]["type"] == "authentication_error"
    none = await api.client.post("/api/v1/memory/search", json={"user_id": "alice", "query": "x"})
    assert none.status_code == 401


async def test_store_ids(api: Api) -> None:
    for bad in ("", "-lead", "a" * 65, "has space", "ü"):
        response = await api.call("POST", "collection", {"user_id": bad})
        assert response.status_code == 400, bad
        assert response.json()["error"]["type"] == "invalid_request_error"
    made = await api.ok("POST", "collection", {"user_id": "Team.Notes_2-b"})
    assert made["status"] == "created" and made["user_id"] == "Team.Notes_2-b"
    same = await api.ok("POST", "collection", {"user_id": "team.notes_2-B"})
    assert same["status"] == "exists" and same["user_id"] == "Team.Notes_2-b"
    default = await api.ok("POST", "store", {"user_id": "default", "content": "built-in store"})
    assert default["status"].startswith("stored")
    listed = await api.ok("GET", "collection")
    assert {"default", "alice", "Team.Notes_2-b"} <= {c["user_id"] for c in listed["collections"]}
    await api.ok("POST", "store", {"user_id": "team.notes_2-b", "content": "weekly sync on Monday"})
    deleted = await api.ok("DELETE", "collection", {"user_id": "TEAM.NOTES_2-B"})
    assert deleted["memories_deleted"] == 1
    gone = await api.call("POST", "search", {"user_id": "team.notes_2-b", "query": "sync"})
    assert gone.status_code == 404


async def test_supersede_keeps_history_and_speaker_forget_removes(api: Api) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    stored = await api.ok(
        "POST",
        "store",
        {"user_id": "alice", "content": "Bob lives in Berlin", "metadata": {"speaker": "Bob"}},
    )
    new = await api.ok(
        "POST",
        "supersede",
        {"user_id": "alice", "memory_id": stored["id"], "content": "Bob moved to Munich"},
    )
    assert new["id"] == stored["id"] and new["memory"]["speaker"] == "Bob"
    assert new["memory"]["history"][0]["content"] == "Bob lives in Berlin"
    hits = await api.ok(
        "POST", "search", {"user_id": "alice", "query": "where does Bob live", "speaker": "Bob"}
    )
    assert [m["content"] for m in hits["memories"]] == ["Bob moved to Munich"]
    missing = await api.call(
        "POST",
        "supersede",
        {"user_id": "alice", "memory_id": "00000000-0000-4000-8000-000000000000", "content": "x"},
    )
    assert missing.status_code == 404
    forgot = await api.ok("POST", "forget", {"user_id": "alice", "memory_id": stored["id"]})
    assert forgot["deleted"] == 1
    listed = await api.ok("GET", "speakers", params={"user_id": "alice"})
    assert listed["speakers"][0]["memories"] == 0  # deleting a memory deletes its tag
    both = await api.call("POST", "forget", {"user_id": "alice"})
    assert both.status_code == 400
    for text in ("我喜欢喝咖啡", "我女儿叫小橙子"):
        await api.ok("POST", "store", {"user_id": "alice", "content": text})
    everything = await api.ok("POST", "forget", {"user_id": "alice", "all": True})
    assert everything["deleted"] == 2 and api.store.count("alice") == 0


async def test_other_stores_memory_ids_are_not_reachable(api: Api) -> None:
    await api.ok("POST", "collection", {"user_id": "carol"})
    stored = await api.ok("POST", "store", {"user_id": "carol", "content": "carol's PIN is 4321"})
    stolen = await api.call(
        "POST", "forget", {"user_id": "alice", "memory_id": stored["id"]}, key=api.alice_key
    )
    assert stolen.status_code == 404
    assert api.store.count("carol") == 1


async def test_models_header(api: Api) -> None:
    models = await api.client.get("/api/v1/models", headers={"X-API-Key": api.workspace})
    [model] = models.json()["models"]
    ok = await api.call(
        "POST", "search", {"user_id": "alice", "query": "x"}, headers={"X-WOS-Model": model["id"]}
    )
    assert ok.status_code == 200 and "Sunset" not in ok.headers
    unknown = await api.call(
        "POST", "search", {"user_id": "alice", "query": "x"}, headers={"X-WOS-Model": "gpt-0"}
    )
    assert unknown.status_code == 400 and unknown.json()["error"]["model"] == "gpt-0"


async def test_bad_input_gets_the_envelope(api: Api) -> None:
    cases = [
        ({"user_id": "alice"}, 400),  # content missing
        ({"user_id": "alice", "content": ""}, 400),
        ({"user_id": "alice", "content": "   "}, 400),
        ({"user_id": "alice", "content": 42}, 400),
        ({"user_id": "alice", "content": "x" * 8001}, 400),
        ({"user_id": "alice", "content": "ok", "surprise": 1}, 400),
    ]
    for body, status in cases:
        response = await api.call("POST", "store", body)
        assert response.status_code == status, body
        assert response.json()["type"] == "error"
    raw = await api.client.post(
        "/api/v1/memory/store",
        content=b"{not json",
        headers={"X-API-Key": api.workspace, "Content-Type": "application/json"},
    )
    assert raw.status_code == 400 and raw.json()["error"]["type"] == "invalid_request_error"
    huge = await api.client.post(
        "/api/v1/memory/store", content=b"x" * 70000, headers={"X-API-Key": api.workspace}
    )
    assert huge.status_code == 413 and huge.json()["error"]["type"] == "request_too_large"
    assert api.store.count("alice") == 0


async def test_openapi_document_needs_a_key(api: Api) -> None:
    anonymous = await api.client.get("/api/v1/openapi.json")
    assert anonymous.status_code == 401
    document = (
        await api.client.get("/api/v1/openapi.json", headers={"X-API-Key": api.workspace})
    ).json()
    assert {
        "/api/v1/memory/store",
        "/api/v1/memory/search",
        "/api/v1/memory/speakers",
        "/api/v1/memory/by-speaker",
    } <= set(document["paths"])


def test_iso_round_trip() -> None:
    from server.api.service import iso, parse_iso

    now = round(dt.datetime(2026, 7, 10, 4, 20, 39, 123456, tzinfo=dt.UTC).timestamp(), 6)
    assert abs(parse_iso(iso(now) or "") - now) < 1e-6
