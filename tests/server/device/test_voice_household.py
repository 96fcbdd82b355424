"""A household of voices on one device, end to end: the member identified by voice hears the
household's constraints and the other members', each in its owner's name; a private member's
are never read to another voice (real stack on loopback, real embedder and store, real voice
encoder and recordings; the recogniser scripted, since the recordings do not say the requests)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from bench.voice_recordings import Speaker
from config.settings import load_settings
from memory.importer import MemoryLine, import_memories
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.device.session import own_person
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from server.voices.embedder import VoiceEmbedder
from server.voices.enrol import enrol
from server.voices.store import VoiceStore
from tests.conftest import RunningHearth, start_hearth
from tests.server.voices.conftest import pcm, real_speakers, voice_embedder, weights_path
from tests.support.scripted_asr import ScriptedASR
from tests.support.scripted_llm import Reply, ScriptedLLM

__all__ = ["real_speakers", "voice_embedder"]  # the shared fixtures, used here by name

MAC = "aa:bb:cc:00:48:01"
GRANDMA, MUM = PersonId("grandma"), PersonId("mum")
EGG = "朵朵对鸡蛋过敏，鸡蛋羹、蛋糕都不能吃"
WARFARIN = "我在吃华法林，布洛芬和阿司匹林都不能吃"
MUMS_SECRET = "我对花粉过敏，这事别告诉别人"


@pytest.fixture
async def household(
    tmp_path: Path,
    redis: Redis,
    redis_url: str,
    scripted_llm: ScriptedLLM,
    embedder: UseEmbedder,
    voice_embedder: VoiceEmbedder,
    real_speakers: list[Speaker],
) -> AsyncIterator[tuple[RunningHearth, ScriptedASR]]:
    home = PersonId(await own_person(MAC))
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    for person, text, subject in ((home, EGG, "朵朵"), (GRANDMA, WARFARIN, "我"),
                                  (MUM, MUMS_SECRET, "我")):  # fmt: skip
        line = MemoryLine(text=text, cls="safety", subject=subject, source="test")
        import_memories([line], person, embedder, store)
    voices = VoiceStore(redis)
    for member, speaker, who in ((GRANDMA, "奶奶", 1), (MUM, "妈妈", 2)):
        sentences = [pcm(w) for w in real_speakers[who].enrol]
        await enrol(voices, voice_embedder, home, member, speaker, sentences)
    await voices.set_private(home, MUM, True)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    asr = ScriptedASR()
    async with start_hearth(
        tmp_path, redis_url, scripted_llm.base_url, scripted_llm, memory=engine, asr=asr,
        vad={"min_silence_ms": 1500, "early_asr_ms": 0},
        voices={"weights_file": str(weights_path().resolve())},
    ) as hearth:  # fmt: skip
        yield hearth, asr
    store.close()


async def _ask(hearth: RunningHearth, asr: ScriptedASR, voice: bytes, text: str) -> tuple[str, str]:
    """What the device said, and the memory block the model read, for ``text`` in ``voice``."""
    hearth.llm.responder = lambda req: Reply("好的。")
    asr.saying = text
    device = hearth.device(MAC)
    await device.connect()
    result = await device.speak(voice, silence_ms=2000, within_s=60)
    await device.close()
    messages = hearth.llm.requests[-1]["messages"]
    block = "\n".join(str(m["content"]) for m in messages if m["role"] == "system")
    return result.text, block


async def test_a_member_hears_the_households_and_another_members_constraints(
    household: tuple[RunningHearth, ScriptedASR], real_speakers: list[Speaker]
) -> None:
    hearth, asr = household
    grandma = pcm(real_speakers[1].enrol[0])
    said, block = await _ask(hearth, asr, grandma, "明天早上给朵朵蒸个鸡蛋羹吧")
    assert EGG in block and "朵朵对鸡蛋过敏" in said  # told by the father, heard by grandma
    said, block = await _ask(hearth, asr, grandma, "我腰疼得厉害，吃片布洛芬行不行")
    assert WARFARIN in block and "华法林" in said  # her own, in her own words


async def test_a_private_members_constraint_is_never_read_to_another_voice(
    household: tuple[RunningHearth, ScriptedASR], real_speakers: list[Speaker]
) -> None:
    hearth, asr = household
    grandma, mum = pcm(real_speakers[1].enrol[0]), pcm(real_speakers[2].enrol[0])
    said, block = await _ask(hearth, asr, grandma, "妈妈花粉过敏吗？我想买束百合送她")
    assert MUMS_SECRET not in block and "别告诉" not in block and "花粉过敏" not in said
    said, block = await _ask(hearth, asr, mum, "我想在卧室摆一束百合，花粉会不会有事")
    assert MUMS_SECRET in block  # hers, to her own voice
    said, block = await _ask(hearth, asr, mum, "奶奶腰疼，给她吃片布洛芬吧")
    assert "奶奶在吃华法林，布洛芬和阿司匹林都不能吃" in block and "华法林" in said
