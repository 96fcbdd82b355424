"""The write-quality bench's replay on the real write path (scripted write model): a labelled
session is seeded, remembered and scored as the bench does it."""

from __future__ import annotations

import pytest

from bench import write_quality
from providers.llm import JsonLLM
from tests.workers.conftest import WriteRig
from workers.writepath import WritePath

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


async def test_a_move_replayed_and_scored(rig: WriteRig) -> None:
    sessions = write_quality.load()
    move = next(s for s in sessions.sessions if s.id == "upd-1")
    rig.script.facts = {"搬到滨江区": ["我们家上个月搬到滨江区了"]}
    rig.script.tags = {"我们家上个月搬到滨江区了": ("fact", "volume", None, "我")}
    llm = JsonLLM(base_url=rig.llm.base_url, model="scripted", api_key="", timeout_s=30,
                  max_tokens=512, style="json_schema")  # fmt: skip
    write_path = WritePath(rig.redis, rig.memory.embedder, rig.memory.store, llm,
                           rig.settings.write)  # fmt: skip
    result = await write_quality.run_session(write_path, move, sessions.ended_at)
    assert rig.script.problems == [] and result.error is None
    assert [(i.kind, i.ok) for i in result.items] == [
        ("present", True), ("tags", True), ("gone", True), ("history", True)
    ]  # fmt: skip
    assert [m["text"] for m in result.memories] == ["我们家上个月搬到滨江区了"]
    assert result.memories[0]["history"] == ["我们家住在杭州西湖区"]
