"""A household's voices in the console: enrolled from three uploaded WAV files through the same
enrolment as the command line, refused with the reason shown, listed and removed; an account
reaches only its own household, an admin any; nothing without a signed-in account and its CSRF
token (real Redis, model and voices; the console on loopback)."""

from __future__ import annotations

import io
import re
import wave
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
import pytest
from redis.asyncio import Redis

from bench.voice_recordings import Speaker
from config.settings import load_settings
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.auth import TokenAuthority
from server.console.accounts import Accounts
from server.console.app import ConsoleContext, build_console
from server.console.sessions import SessionSigner
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from server.persons import PersonMap
from server.voices.store import VoiceStore
from tests.server.voices.conftest import pcm, real_speakers, weights_path
from tests.support.serving import serving

__all__ = ["real_speakers"]  # the shared fixture, used here by name
PASSWORDS = {"zhang": "zhang-password-1", "admin": "admin-password-3"}


@dataclass
class Console:
    url: str
    redis: Redis


@pytest.fixture
async def console(tmp_path: Path, redis: Redis, embedder: UseEmbedder) -> AsyncIterator[Console]:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    accounts = Accounts(redis)
    await accounts.create("zhang", PASSWORDS["zhang"], "zhang", admin=False)
    await accounts.create("admin", PASSWORDS["admin"], "admin-home", admin=True)
    signer, authority = SessionSigner(b"k" * 32, 3600), TokenAuthority(b"t" * 32, 86400)
    ctx = ConsoleContext(redis, engine, signer, authority, voice_weights=weights_path())
    async with serving(build_console(ctx)) as url:
        yield Console(url, redis)
    store.close()


def _wav(samples: np.ndarray, rate: int = 16000) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm(samples))
    return buffer.getvalue()


def _files(waves: list[np.ndarray]) -> list[tuple[str, tuple[str, bytes, str]]]:
    return [("sentence", (f"s{n}.wav", _wav(w), "audio/wav")) for n, w in enumerate(waves)]


async def _signed_in(http: httpx.AsyncClient, name: str) -> str:
    """Signs in; the CSRF token the voices page carries."""
    assert (await http.post("/login", data={"name": name, "password": PASSWORDS[name]})).is_redirect
    page = await http.get("/voices")
    assert page.status_code == 200
    return str(re.findall(r'name="csrf" value="([^"]+)"', page.text)[0])


async def test_a_member_is_enrolled_from_three_wavs_then_listed_and_removed(
    console: Console, real_speakers: list[Speaker]
) -> None:
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as http:
        csrf = await _signed_in(http, "zhang")
        assert "还没有登记的声音" in (await http.get("/voices")).text
        enrolled = await http.post("/voices/enrol", data={"csrf": csrf, "speaker": "妈妈"},
                                   files=_files(real_speakers[1].enrol))  # fmt: skip
        assert enrolled.status_code == 200, enrolled.text
        assert "妈妈 的声音已登记（zhang.mama）" in enrolled.text
        [voice] = await VoiceStore(console.redis).voices("zhang")
        assert (voice.member, voice.speaker) == ("zhang.mama", "妈妈")
        assert await PersonMap(console.redis).speaker_of("zhang.mama") == "妈妈"
        listed = (await http.get("/voices")).text
        assert "zhang.mama" in listed and "妈妈" in listed
        removed = await http.post("/voices/remove", data={"csrf": csrf, "member": "zhang.mama"})
        assert removed.status_code == 303
    assert await VoiceStore(console.redis).voices("zhang") == []


async def test_refusals_are_shown_with_their_reason(
    console: Console, real_speakers: list[Speaker]
) -> None:
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as http:
        csrf = await _signed_in(http, "zhang")
        quiet = [np.zeros(48000, np.float32)] * 3
        silence = await http.post("/voices/enrol", data={"csrf": csrf, "speaker": "奶奶"},
                                  files=_files(quiet))  # fmt: skip
        assert silence.status_code == 422 and "第 1 句是静音。（silence）" in silence.text
        junk = [("sentence", (f"s{n}.wav", b"not a wav", "audio/wav")) for n in range(3)]
        not_wav = await http.post("/voices/enrol", data={"csrf": csrf, "speaker": "奶奶"},
                                  files=junk)  # fmt: skip
        assert not_wav.status_code == 400
        mum = _files(real_speakers[1].enrol)
        await http.post("/voices/enrol", data={"csrf": csrf, "speaker": "妈妈"}, files=mum)
        twice = await http.post("/voices/enrol", data={"csrf": csrf, "speaker": "老妈"}, files=mum)
        assert twice.status_code == 409
        assert "已经登记为 妈妈（zhang.mama）" in twice.text and "same_voice" in twice.text
    assert [v.member for v in await VoiceStore(console.redis).voices("zhang")] == ["zhang.mama"]


async def test_an_account_reaches_only_its_own_household_and_an_admin_any(
    console: Console, real_speakers: list[Speaker]
) -> None:
    store = VoiceStore(console.redis)
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as http:
        csrf = await _signed_in(http, "zhang")
        assert (await http.get("/voices", params={"household": "li"})).status_code == 403
        elsewhere = {"csrf": csrf, "speaker": "李", "household": "li"}
        other = await http.post("/voices/enrol", files=_files(real_speakers[2].enrol),
                                data=elsewhere)  # fmt: skip
        assert other.status_code == 403
        typed = await http.post("/voices/enrol", files=_files(real_speakers[2].enrol),
                                data={"csrf": csrf, "speaker": "李", "member": "li"})  # fmt: skip
        assert typed.status_code == 200  # a typed member id is an admin's: ignored here
    assert [v.member for v in await store.voices("zhang")] == ["zhang.li"]
    assert await store.voices("li") == []
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as http:
        csrf = await _signed_in(http, "admin")
        admin_enrol = await http.post("/voices/enrol", files=_files(real_speakers[3].enrol),
                                      data={"csrf": csrf, "speaker": "Li", "household": "li",
                                            "member": "li-senior"})  # fmt: skip
        assert admin_enrol.status_code == 200, admin_enrol.text
        assert 'href="/voices?household=li"' in (await http.get("/voices")).text
    assert [v.member for v in await store.voices("li")] == ["li-senior"]


async def test_nothing_without_a_signed_in_account_and_its_csrf_token(
    console: Console, real_speakers: list[Speaker]
) -> None:
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as anonymous:
        for path in ("/voices", "/voices/record.js"):
            answer = await anonymous.get(path)
            assert answer.status_code == 303 and answer.headers["location"] == "/login"
        upload = await anonymous.post("/voices/enrol", data={"speaker": "妈妈"},
                                      files=_files(real_speakers[1].enrol))  # fmt: skip
        assert upload.status_code == 303
        removal = await anonymous.post("/voices/remove", data={"member": "zhang.mama"})
        assert removal.status_code == 303
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as http:
        await _signed_in(http, "zhang")
        forged = await http.post("/voices/enrol", data={"csrf": "nope", "speaker": "妈妈"},
                                 files=_files(real_speakers[1].enrol))  # fmt: skip
        assert forged.status_code == 403
        script = await http.get("/voices/record.js")
        assert script.status_code == 200 and "MediaRecorder" in script.text
    assert await VoiceStore(console.redis).voices("zhang") == []


async def test_an_upload_beyond_three_sentences_worth_is_refused_before_it_is_read(
    console: Console,
) -> None:
    async with httpx.AsyncClient(base_url=console.url, timeout=60) as http:
        csrf = await _signed_in(http, "zhang")
        huge = [("sentence", ("s.wav", b"\0" * (13 * 1024 * 1024), "audio/wav"))]
        answer = await http.post("/voices/enrol", data={"csrf": csrf}, files=huge)
        assert answer.status_code == 413
