"""The write path's two LLM calls that need judgement — extraction and tagging — through the
real local model (llama.cpp, json_object + schema grammar), on a short Chinese conversation.

Slow: about a minute on 2 cores (model load, two calls). Part of the default suite; run alone
with ``.venv/bin/pytest tests/workers/test_local_llm_writepath.py``.
"""

from __future__ import annotations

import datetime as dt
import re

import pytest

from memory.schema import Decay, MemoryClass
from providers.llm import JsonLLM
from providers.processes import LocalLLMServer
from tests.providers.test_local_llm import local_llm  # noqa: F401 - the shared fixture
from workers import extraction, tagging
from workers.contract import Said

pytestmark = pytest.mark.local_llm


async def test_extraction_and_tagging_with_the_local_model(
    local_llm: LocalLLMServer,  # noqa: F811
) -> None:
    llm = JsonLLM(base_url=local_llm.base_url, model="local", api_key="", timeout_s=300,
                  max_tokens=512, style="json_object")  # fmt: skip
    said = [Said(role="user", speaker="老张", text="我老婆对海鲜过敏，尤其是虾"),
            Said(role="assistant", speaker="me", text="好的，我记住了。")]  # fmt: skip
    day = dt.date(2026, 11, 25)
    facts = (await extraction.extract(llm, said, day)).facts
    assert facts, "the local model extracted nothing"
    seafood = next(f for f in facts if "海鲜" in f)
    assert not re.search(r"[A-Za-z]{3,}", seafood), f"not kept in Chinese: {seafood}"
    tags = await tagging.tag(llm, [seafood], day)
    found = tags[seafood]
    assert found is not None, "the tag did not come back aligned to the fact's text"
    assert found.cls is MemoryClass.SAFETY
    assert found.decay is Decay.VOLUME and found.expires_at is None
    assert found.subject is not None and "老婆" in found.subject
