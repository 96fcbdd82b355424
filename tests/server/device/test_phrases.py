from __future__ import annotations

import pytest

from server.device.phrases import is_exit_phrase, is_one_of

EXITS = ["再见", "拜拜", "退出"]


@pytest.mark.parametrize(
    "said", ["再见", "再见。", "拜拜!", "好的，拜拜", "那就先这样吧，再见", "嗯 拜拜 啦"]
)
def test_exit_phrases_with_punctuation_and_courtesy_end_the_session(said: str) -> None:
    assert is_exit_phrase(said, EXITS)


@pytest.mark.parametrize("said", ["帮我跟奶奶说再见的话怎么写", "再见这个词用英语怎么说", "", "。"])
def test_requests_that_merely_contain_an_exit_word_do_not(said: str) -> None:
    assert not is_exit_phrase(said, EXITS)


def test_wake_words_match_regardless_of_case_and_punctuation() -> None:
    assert is_one_of("你好，小智！", ["你好小智"])
    assert is_one_of("Hi ESP", ["hi esp"])
    assert not is_one_of("你好小智今天天气怎么样", ["你好小智"])
