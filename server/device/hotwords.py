"""What the recogniser heard, with the household's words put back where it heard their sounds.

Whisper ``base`` writes a word it does not expect as other characters of the same sound:
「盲国」 for 芒果, 「青梅素」 for 青霉素, 「阿斯皮灵」 for 阿司匹林 — the very words a
household assistant must get right (allergens, medicines, names). Given the words that matter
here — the household's names and the safety vocabulary (``understanding.knowledge``) — a run of
characters whose toneless pinyin is a word's, and which is not itself a word of the dictionary,
becomes that word. Two characters sound alike by chance (忙过 / 芒果): a two-character word is
put back only over whole words of the heard text, with the word's tones (站道 for 栈道, 公宝 for
宫保: whisper hears tones) or one character rare (盲 of 盲国). Words of three or more characters
also match with the initials and finals a speaker or the recogniser most often blurs (zh/z,
ch/c, sh/s, -ng/-n). What they change in correctly written text is measured by ``hearth bench
asr`` on every run (``bench.hotword_checks``; README). No model, about 0.1 ms per
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


@lru_cache(maxsize=4096)
def _toned(text: str) -> tuple[str, ...]:
    return tuple(lazy_pinyin(text, style=Style.TONE3, neutral_tone_with_five=True))


def _key(sounds: Iterable[str], blur: bool) -> tuple[str, ...]:
    return tuple(_blurred(s) for s in sounds) if blur else tuple(sounds)


def _known_word(text: str) -> bool:
    return (jieba.dt.FREQ.get(text) or 0) >= COMMON


def correct(
    heard: str, words: Iterable[str], phrases: Iterable[tuple[str, str]] = ()
) -> tuple[str, list[tuple[str, str]]]:
    """``heard`` with every run that sounds like one of ``words`` written as that word, longest
    words first; and the (heard, word) pairs replaced. ``phrases`` are (phrase, word) pairs: a
    household word with the characters it stands beside in the memories (「打疫苗」 for 疫苗,
    three or more characters); a run that sounds like the phrase, has not got its word and is not
    a dictionary word is written as the phrase (「打一秒」 → 打疫苗: 一秒 alone is a word)."""
    wanted = frozenset(w for w in words if len(w) >= 2 and _HAN.fullmatch(w))
    pairs = frozenset((p, w) for p, w in phrases if len(p) >= 3 and _HAN.fullmatch(p) and w in p)
    index, known = _index(wanted, pairs)
    if not index or not _HAN.search(heard):
        return heard, []
    replaced: list[tuple[str, str]] = []
    out = []
    last = 0
    for run in _HAN.finditer(heard):
        out.append(heard[last : run.start()])
        out.append(_correct_run(run.group(), index, known, replaced))
        last = run.end()
    out.append(heard[last:])
    return "".join(out), replaced


# by length (longest first): sound key → (what to write, the word it must put back)
Index = tuple[tuple[int, dict[tuple[str, ...], tuple[str, str]]], ...]


@lru_cache(maxsize=64)
def _index(
    words: frozenset[str], phrases: frozenset[tuple[str, str]]
) -> tuple[Index, frozenset[str]]:
    """The words and phrases by length (longest first), each length's by its sound key: built
    once per set (the vocabulary never changes; a household's words rarely), so an utterance
    costs one look-up per window and length. A word wins over a phrase of the same sound.
    Also every word and phrase as written: a run that is one of them was heard right."""
    by_length: dict[int, dict[tuple[str, ...], tuple[str, str]]] = {}
    for word in sorted(words):
        key = _key(_sounds(word), len(word) >= 3)
        by_length.setdefault(len(word), {}).setdefault(key, (word, word))
    for phrase, word in sorted(phrases):
        key = _key(_sounds(phrase), True)
        by_length.setdefault(len(phrase), {}).setdefault(key, (phrase, word))
    known = words | {phrase for phrase, _ in phrases}
    return tuple(sorted(by_length.items(), reverse=True)), known


def _correct_run(
    run: str, index: Index, known: frozenset[str], replaced: list[tuple[str, str]]
) -> str:
    """``known``: a run that is one of the words or phrases was heard right (柯基 is not 科技
    misheard when the household has both)."""
    sounds = _sounds(run)
    if len(sounds) != len(run):  # pypinyin split it otherwise: leave it as heard
        return run
    chars = list(run)
    done = [False] * len(run)
    bounds: set[int] | None = None
    for n, by_sound in index:
        for i in range(len(run) - n + 1):
            found = by_sound.get(_key(sounds[i : i + n], n >= 3))
            window = "".join(chars[i : i + n])
            if found is None or any(done[i : i + n]) or window in known or _known_word(window):
                continue
            written, word = found
            if word != written and word in window:  # the phrase's word was heard right
                continue
            if n == 2 or word != written:  # a phrase, too, must be whole heard words
                bounds = _bounds(run) if bounds is None else bounds
                if not (i in bounds and i + n in bounds):
                    continue
            if n == 2 and not (_rare(window) or _toned(window) == _toned(written)):
                continue
            chars[i : i + n] = list(written)
            done[i : i + n] = [True] * n
            replaced.append((window, written))
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
