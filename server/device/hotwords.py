"""What the recogniser heard, with the household's words put back where it heard their sounds.

Whisper ``base`` writes a word it does not expect as other characters of the same sound:
「盲国」 for 芒果, 「青梅素」 for 青霉素, 「阿斯皮灵」 for 阿司匹林 — the very words a
household assistant must get right (allergens, medicines, names). Given the words that matter
here — the household's names and the safety vocabulary (``server.memory.knowledge``) — a run of
characters whose toneless pinyin is a word's, and which is not itself a word of the dictionary,
becomes that word. Two characters sound alike by chance (忙过 / 芒果): a two-character word is
put back only over whole words of the heard text, one character of which is rare (盲 of 盲国);
words of three or more characters also match with the initials and finals a speaker or the
recogniser most often blurs (zh/z, ch/c, sh/s, -ng/-n). No model, well under a millisecond per
utterance; each correction is logged with what was heard.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

import jieba
from pypinyin import Style, lazy_pinyin

_HAN = re.compile(r"[\u4e00-\u9fff]+")
_BLUR = (("zh", "z"), ("ch", "c"), ("sh", "s"))
# a heard word the dictionary knows at least this well is taken as said
COMMON = 5
# a character rarer than this (jieba's counts: 盲 403, 忙 10,154) is a likely mishearing
RARE = 1000


def _blurred(syllable: str) -> str:
    for hard, soft in _BLUR:
        if syllable.startswith(hard):
            syllable = soft + syllable[len(hard) :]
            break
    return syllable[:-1] if syllable.endswith("ng") else syllable


@lru_cache(maxsize=4096)
def _sounds(text: str) -> tuple[str, ...]:
    return tuple(lazy_pinyin(text, style=Style.NORMAL))


def _key(sounds: Iterable[str], blur: bool) -> tuple[str, ...]:
    return tuple(_blurred(s) for s in sounds) if blur else tuple(sounds)


def _known_word(text: str) -> bool:
    return (jieba.dt.FREQ.get(text) or 0) >= COMMON


def correct(heard: str, words: Iterable[str]) -> tuple[str, list[tuple[str, str]]]:
    """``heard`` with every run that sounds like one of ``words`` written as that word, longest
    words first; and the (heard, word) pairs replaced."""
    targets = sorted({w for w in words if len(w) >= 2 and _HAN.fullmatch(w)}, key=len, reverse=True)
    if not targets or not _HAN.search(heard):
        return heard, []
    replaced: list[tuple[str, str]] = []
    out = []
    last = 0
    for run in _HAN.finditer(heard):
        out.append(heard[last : run.start()])
        out.append(_correct_run(run.group(), targets, replaced))
        last = run.end()
    out.append(heard[last:])
    return "".join(out), replaced


def _correct_run(run: str, targets: list[str], replaced: list[tuple[str, str]]) -> str:
    sounds = _sounds(run)
    if len(sounds) != len(run):  # pypinyin split it otherwise: leave it as heard
        return run
    chars = list(run)
    done = [False] * len(run)
    bounds: set[int] | None = None
    for word in targets:
        n = len(word)
        blur = n >= 3
        want = _key(_sounds(word), blur)
        for i in range(len(run) - n + 1):
            window = "".join(chars[i : i + n])
            if any(done[i : i + n]) or window == word:
                continue
            if _key(sounds[i : i + n], blur) != want or _known_word(window):
                continue
            if n == 2:
                bounds = _bounds(run) if bounds is None else bounds
                if not (i in bounds and i + n in bounds and _rare(window)):
                    continue
            chars[i : i + n] = list(word)
            done[i : i + n] = [True] * n
            replaced.append((window, word))
    return "".join(chars)


def _bounds(run: str) -> set[int]:
    """Where the dictionary's words of ``run`` begin and end (unknown ones cut per character)."""
    at, bounds = 0, {0}
    for token in jieba.lcut(run, HMM=False):
        at += len(token)
        bounds.add(at)
    return bounds


def _rare(window: str) -> bool:
    return min((jieba.dt.FREQ.get(ch) or 0) for ch in window) < RARE
