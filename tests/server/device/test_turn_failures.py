"""Provider failures inside a turn: the device is told, the session and other devices go on."""

from __future__ import annotations

from pathlib import Path

from redis.asyncio import Redis

from config.settings import load_settings
from providers.errors import PermanentProviderError
from providers.tts import EspeakTTS, SpeechAudio
from tests.conftest import start_hearth
from tests.support.scripted_llm import Reply, ScriptedLLM


class BrokenOnSecondSentence:
    """Real espeak-ng, except that the sentence containing 坏 fails."""

    name = "flaky"

    def __init__(self) -> None:
        self.inner = EspeakTTS(load_settings().tts)

    async def synthesize(self, text: str) -> SpeechAudio:
        if "坏" in text:
            raise PermanentProviderError("tts", "engine crashed")
        return await self.inner.synthesize(text)


async def test_tts_failure_mid_reply_skips_that_audio_and_finishes_the_turn(
    tmp_path: Path, redis: Redis, redis_url: str, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.responder = lambda req: Reply("第一句很好。第二句坏了。第三句也好。")
    tts = BrokenOnSecondSentence()
    async with start_hearth(tmp_path, redis_url, scripted_llm.base_url, scripted_llm, tts) as h:
        device = h.device()
        await device.connect()
        result = await device.ask("说三句话")
        # the session is still usable afterwards
        scripted_llm.responder = lambda req: Reply("还在。")
        again = await device.ask("还在吗")
        await device.close()
    assert result.sentences == ["第一句很好。", "第二句坏了。", "第三句也好。"]
    assert len(result.frames) > 10  # audio for the sentences that worked
    assert again.text == "还在。"
