"""A vision model over any OpenAI-compatible endpoint: a photo and a question in, an answer out
(``chat.completions`` with an ``image_url`` content part holding the photo as a data URL)."""

from __future__ import annotations

import base64
from typing import Protocol

import openai

from config.settings import VisionSettings
from providers.errors import PermanentProviderError, TransientProviderError
from providers.llm import openai_client, provider_error

INSTRUCTION = (
    "你是家里语音助手的眼睛。根据照片用简短的中文回答问题（不超过三句话），"
    "只说照片里看得到的东西，看不清就直说。"
)


class VisionModel(Protocol):
    name: str

    async def explain(self, question: str, image: bytes, content_type: str) -> str: ...


class NoVisionModel:
    """No vision model configured: every photo gets a clear refusal, nothing is guessed."""

    name = "none"

    async def explain(self, question: str, image: bytes, content_type: str) -> str:
        raise PermanentProviderError(
            self.name,
            "no vision model is configured: set vision.base_url and vision.model "
            "(any OpenAI-compatible vision model) to answer photos",
            "unavailable",
        )


class OpenAIVision:
    name = "openai-compatible-vision"

    def __init__(self, base_url: str, model: str, api_key: str, timeout_s: float,
                 max_tokens: int) -> None:  # fmt: skip
        self.model = model
        self.max_tokens = max_tokens
        self._client = openai_client(base_url, api_key, timeout_s)

    async def explain(self, question: str, image: bytes, content_type: str) -> str:
        url = f"data:{content_type};base64,{base64.b64encode(image).decode()}"
        try:
            response = await self._client.chat.completions.create(
                model=self.model,
                max_tokens=self.max_tokens,
                temperature=0.2,
                messages=[
                    {"role": "system", "content": INSTRUCTION},
                    {
                        "role": "user",
                        "content": [
                            {"type": "image_url", "image_url": {"url": url}},
                            {"type": "text", "text": question or "照片里有什么？"},
                        ],
                    },
                ],
            )
        except (openai.APIError, ValueError, TypeError, AttributeError) as exc:
            raise provider_error(self.name, exc, garbage_transient=True) from exc
        answer = (response.choices[0].message.content or "").strip() if response.choices else ""
        if not answer:
            raise TransientProviderError(self.name, "the vision model answered nothing")
        return answer


def build_vision(settings: VisionSettings) -> VisionModel:
    if not settings.base_url or not settings.model:
        return NoVisionModel()
    return OpenAIVision(
        settings.base_url,
        settings.model,
        settings.api_key.get_secret_value(),
        settings.timeout_s,
        settings.max_tokens,
    )
