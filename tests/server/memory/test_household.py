"""The household's names as the recogniser's hint: read from the person's own memories in the
background, per person, refreshed; a dead store costs the hint only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from redis.asyncio import Redis
from structlog.testing import capture_logs

from bench.speech import recorded_samples
from config.settings import load_settings
from memory.importer import import_file
from memory.schema import Memory, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.engine import MemoryEngine
from server.memory.household import (
    REFRESH_S,
    HouseholdNames,
    household_phrases,
    household_words,
    ranked_names,
)
from server.memory.readpath import ReadPath
from server.persons import default_person
from tests.conftest import start_hearth
from tests.memory.conftest import FIXTURES, LI, ZHANG
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.waiting import wait_until


def test_names_are_the_households_not_relations_or_the_speaker_self() -> None:
    memories = [
        Memory("女儿叫小橙子，今年五岁", ZHANG, subject="女儿", entities=("女儿", "小橙子"),
               speaker="张伟"),
        Memory("小橙子对花生过敏", ZHANG, subject="小橙子", entities=("小橙子",)),
        Memory("我家猫叫年糕", ZHANG, subject="猫", entities=("猫", "年糕")),
        Memory("我对猫毛过敏", ZHANG, subject="我", entities=("猫",)),
        Memory("我妈每天吃降压药", ZHANG, subject="我妈", entities=("妈妈",), speaker="device-7"),
    ]  # fmt: skip
    assert ranked_names(memories, 12) == ["小橙子", "张伟", "年糕"]
    assert ranked_names(memories, 1) == ["小橙子"]  # the name most memories are about


def test_words_are_the_nouns_the_memories_use_most() -> None:
    texts = ["老婆每周三晚上上瑜伽课", "我的新手机号尾号是6688", "处方猫粮是给年糕吃的",
             "手机号换了", "我在一家科技公司上班"]  # fmt: skip
    words = household_words([Memory(t, ZHANG) for t in texts], 20)
    assert words[0] == "手机号"  # in two memories
    assert {"瑜伽", "尾号", "处方", "科技", "公司"} <= set(words)
    assert not {"我", "上班", "6688", "每周三"} & set(words)  # nouns of 2-4 characters only
    assert household_words([Memory(t, ZHANG) for t in texts], 2) == words[:2]


def test_phrases_are_the_words_with_their_neighbours_in_the_memories() -> None:
    memories = [
        Memory(t, ZHANG) for t in ("周三上午带小橙子去打疫苗", "疫苗本在抽屉里", "Tom的疫苗")
    ]
    phrases = dict(household_phrases(memories, ["疫苗", "抽屉"]))
    assert phrases == {"打疫苗": "疫苗", "疫苗本": "疫苗", "的疫苗": "疫苗",  # one each side
                       "在抽屉": "抽屉", "抽屉里": "抽屉", "在抽屉里": "抽屉"}  # fmt: skip


async def test_names_are_read_in_the_background_per_person(
    store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    now = [0.0]
    names = HouseholdNames(store, 12, clock=lambda: now[0], word_limit=50)
    assert names.known(ZHANG) == () and names.words(ZHANG) == ()  # never waits
    await wait_until(lambda: names.known(ZHANG) != ())
    zhang = names.known(ZHANG)
    assert "小橙子" in zhang and "张伟" in zhang
    assert {"降压药", "吉他", "车库"} <= set(names.words(ZHANG))  # what the memories talk about
    assert not set(zhang) & set(names.words(ZHANG))
    assert ("有吉他课", "吉他") in names.phrases(ZHANG)  # 「我每周四晚上七点有吉他课」
    assert not {"女儿", "老婆", "妈妈", "我"} & set(zhang)
    await wait_until(lambda: names.known(LI) != ())
    assert "豆豆" in names.known(LI) and "小橙子" not in names.known(LI)  # never across persons
    # a name learned later reaches the recogniser once the entry is stale, or a session opens
    import_file(FIXTURES / "household_li.jsonl", ZHANG, embedder, store)
    assert "豆豆" not in names.known(ZHANG)
    now[0] += REFRESH_S
    names.known(ZHANG)
    await wait_until(lambda: "豆豆" in names.known(ZHANG))
    store.delete(
        ZHANG, [m.key for m in store.scroll(ZHANG, limit=100).memories if "豆豆" in m.text]
    )
    names.refresh(ZHANG)  # what a session opening does
    await wait_until(lambda: "豆豆" not in names.known(ZHANG))


class CountingStore:
    remote = False

    def __init__(self) -> None:
        self.reads = 0

    def newest(self, *args: Any) -> list[Memory]:
        self.reads += 1
        return []


async def test_a_refresh_while_a_read_is_under_way_reads_again() -> None:
    """The read under way may have read the store before the change a session's refresh is
    for (the race the background test once lost): one more read follows it."""
    store = CountingStore()
    names = HouseholdNames(store, 12)  # type: ignore[arg-type]
    names.refresh(ZHANG)
    names.refresh(ZHANG)
    await wait_until(lambda: store.reads == 2)
    assert names.known(ZHANG) == ()  # read and fresh: nothing starts a third


class DeadStore:
    remote = False

    def newest(self, *args: Any) -> list[Memory]:
        raise ConnectionError("store down")


async def test_a_dead_store_costs_the_hint_only() -> None:
    names = HouseholdNames(DeadStore(), 12)  # type: ignore[arg-type]
    with capture_logs() as logs:
        assert names.known(ZHANG) == ()
        await wait_until(lambda: any(e["event"] == "household.names_unavailable" for e in logs))
        assert names.known(ZHANG) == ()  # no retry storm: the failure is kept for a while
    assert [e["error"] for e in logs if e["event"] == "household.names_unavailable"] == [
        "store down"
    ]


class RecordingASR:
    name = "recording"

    def __init__(self) -> None:
        self.names: list[tuple[str, ...]] = []

    async def transcribe(self, pcm: bytes, sample_rate: int, names: Sequence[str] = ()) -> str:
        self.names.append(tuple(names))
        return "小橙子能吃花生酱吗，西湖去的房子呢"  # 西湖区 heard as 西湖去


async def test_a_spoken_turn_gives_the_recogniser_its_households_names(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM, embedder: UseEmbedder
) -> None:
    mac = "aa:bb:cc:00:00:31"
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    person = default_person(mac)
    import_file(FIXTURES / "household_zhang.jsonl", person, embedder, store)
    import_file(FIXTURES / "household_li.jsonl", PersonId("someone-else"), embedder, store)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    asr = RecordingASR()
    scripted_llm.responder = lambda req: Reply("小橙子对花生过敏，不能吃。")
    speech = next(s for s in recorded_samples() if s.name == "test_16k.wav")
    try:
        async with start_hearth(
            tmp_path, redis_url, scripted_llm.base_url, scripted_llm, memory=engine, asr=asr
        ) as hearth:
            device = hearth.device(mac)
            await device.connect()
            household = hearth.server.services.voice.names  # type: ignore[union-attr]
            assert household is not None
            await wait_until(lambda: bool(household.known(person)))
            turn = await device.speak(speech.pcm)
            await device.close()
    finally:
        store.close()
    # the household's word put back (a noun of its memories: 「我们家住在杭州西湖区」)
    assert turn.stt == "小橙子能吃花生酱吗，西湖区的房子呢"
    [heard] = asr.names
    assert "小橙子" in heard and "豆豆" not in heard
