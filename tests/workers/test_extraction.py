"""Stage 1's guards around the model: no call for noise, the assistant's claims and prompt
fragments rejected, meaning kept, dates resolved — with a scripted extraction reply."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from memory.utterance_kinds import KindReading, UtteranceKind, classify
from providers.embedder import UseEmbedder
from providers.llm import Message
from workers import extraction
from workers.contract import Said
from workers.extraction import keep_meaning, rejected, tidy

DAY = dt.date(2026, 11, 25)


class Replies:
    def __init__(self, facts: list[Any]) -> None:
        self.facts = facts
        self.prompts: list[str] = []

    async def complete_json(
        self, messages: list[Message], schema: dict[str, Any], name: str
    ) -> str:
        self.prompts.append(str(messages[-1]["content"]))
        return "好的，结果如下：" + json.dumps({"facts": self.facts}, ensure_ascii=False)


def said(*lines: tuple[str, str]) -> list[Said]:
    return [
        Said(role="user" if who == "u" else "assistant", speaker=who, text=text)
        for who, text in lines
    ]


async def test_a_noise_session_makes_no_call() -> None:
    llm = Replies(["现在几点了"])
    found = await extraction.extract(llm, said(("u", "现在几点了"), ("a", "八点。")), DAY)
    assert found.facts == [] and found.calls == 0 and llm.prompts == []


async def test_the_assistants_claims_and_prompt_fragments_are_rejected() -> None:
    llm = Replies(
        ["我女儿叫小橙子", "小橙子上小学二年级", "说话人自己写「我」", "她几岁？", "你好小智"]
    )
    found = await extraction.extract(
        llm,
        said(
            ("u", "你好小智"),
            ("u", "我女儿叫小橙子"),
            ("a", "小橙子今年上小学二年级了吧"),
            ("u", "她才五岁"),
        ),
        DAY,
    )
    # 「她才五岁」, which the model left out, is kept in the person's words, 她 named
    assert found.facts == ["我女儿叫小橙子", "小橙子才五岁"] and found.recovered == ["小橙子才五岁"]
    reasons = {r["fact"]: r["reason"] for r in found.rejected}
    assert "assistant" in reasons["小橙子上小学二年级"]
    assert reasons["说话人自己写「我」"].startswith("prompt fragment")
    assert reasons["她几岁？"] == "a question"
    assert reasons["你好小智"].startswith("not a memory")
    prompt = llm.prompts[0]
    assert "用户：我女儿叫小橙子" in prompt and "助手：小橙子今年上小学二年级了吧" in prompt
    assert "对话日期：2026-11-25" in prompt


async def test_meaning_and_dates_are_kept() -> None:
    llm = Replies(["香菜", {"fact": "下周三下午我要带小橙子去打疫苗"}])
    found = await extraction.extract(
        llm, said(("u", "我不吃香菜，一点都不能放"), ("u", "下周三下午我要带小橙子去打疫苗")), DAY
    )
    assert found.facts == ["我不吃香菜，一点都不能放", "下周三（12月2日）下午我要带小橙子去打疫苗"]


def test_keep_meaning_restores_a_dropped_negation_from_its_clause() -> None:
    assert (
        keep_meaning("我老婆喜欢吃辣", "我老婆不喜欢吃辣的，微辣都受不了") == "我老婆不喜欢吃辣的"
    )
    corrected = "我之前说错了，小橙子不是对芒果过敏，是对猕猴桃过敏"
    assert keep_meaning("小橙子对猕猴桃过敏", corrected) == "小橙子对猕猴桃过敏"
    assert rejected("我喜欢喝绿茶") is None


async def test_what_is_taken_back_is_not_stored_and_a_correction_keeps_the_new_value() -> None:
    llm = Replies(["我想下周去学游泳", "我之前说错了，小橙子不是对芒果过敏，是对猕猴桃过敏"])
    found = await extraction.extract(
        llm,
        said(("u", "我想下周去学游泳"), ("u", "算了，还是不去了"),
             ("u", "我之前说错了，小橙子不是对芒果过敏，是对猕猴桃过敏")),
        DAY,
    )  # fmt: skip
    assert found.facts == ["小橙子对猕猴桃过敏"]
    assert found.rejected == [
        {"fact": "我想下周去学游泳", "reason": "retracted later in the session"}
    ]


def test_asking_to_remember_is_not_part_of_the_fact() -> None:
    assert tidy("我老婆猫毛过敏，你记住啊") == "我老婆猫毛过敏"
    assert tidy("帮我记一下，我女儿对鸡蛋过敏") == "我女儿对鸡蛋过敏"
    assert tidy("不对，是后天下午去银行") == "后天下午去银行"


def _reader(embedder: UseEmbedder) -> extraction.Reader:
    async def read(texts: list[str]) -> dict[str, KindReading | None]:
        vectors = embedder.embed(texts)
        return {t: classify(v, embedder.name) for t, v in zip(texts, vectors, strict=True)}

    return read


async def _kinds(embedder: UseEmbedder, utterances: list[str]) -> extraction.Kinds:
    reader = _reader(embedder)
    return extraction.Kinds(await reader(utterances), reader)


async def test_a_confident_request_with_nothing_lasting_is_not_a_memory(
    embedder: UseEmbedder,
) -> None:
    people = ["再帮我给我舅舅拨个电话", "我舅舅在宁波开出租车"]
    llm = Replies(["我给舅舅拨个电话", "我舅舅在宁波开出租车"])
    kinds = await _kinds(embedder, people)
    found = await extraction.extract(llm, said(*(("u", p) for p in people)), DAY, kinds)
    assert found.facts == ["我舅舅在宁波开出租车"]
    assert any("request" in r["reason"] for r in found.rejected)


async def test_an_utterance_unlike_a_statement_with_nothing_lasting_is_not_a_memory(
    embedder: UseEmbedder,
) -> None:
    people = [
        "给俺放段柳琴戏听听",
        "宝宝，音量小声一点啦",
        "给俺叫个车，去火车站",
        "俺家那条狗叫大黄，九岁了",
    ]
    llm = Replies(people)
    kinds = await _kinds(embedder, people)
    found = await extraction.extract(llm, said(*(("u", p) for p in people)), DAY, kinds)
    assert found.facts == ["俺家那条狗叫大黄，九岁了"]
    liking = ["我喜欢喝咖啡"]  # read as chit-chat with little lasting: still a preference
    kept = await extraction.extract(Replies(liking), said(("u", liking[0])), DAY,
                                    await _kinds(embedder, liking))  # fmt: skip
    assert kept.facts == liking


async def test_a_request_carrying_a_lasting_fact_keeps_the_fact(embedder: UseEmbedder) -> None:
    people = ["我老婆怀孕三个月了，周末做点什么菜给她补补"]
    llm = Replies(["我老婆怀孕三个月了"])
    kinds = await _kinds(embedder, people)
    found = await extraction.extract(llm, said(("u", people[0])), DAY, kinds)
    assert found.facts == ["我老婆怀孕三个月了"]


async def test_the_subject_is_named_across_turns() -> None:
    llm = Replies(["他对青霉素过敏", "每天吃一片阿司匹林"])
    found = await extraction.extract(
        llm, said(("u", "我公公今年七十了"), ("u", "他对青霉素过敏"), ("u", "每天吃一片阿司匹林")),
        DAY,
    )  # fmt: skip
    assert "我公公对青霉素过敏" in found.facts
    assert "我公公，每天吃一片阿司匹林" in found.facts


async def test_a_subject_the_person_never_spoke_of_falls_back_to_their_words() -> None:
    llm = Replies(["我老公不吃香菜"])
    found = await extraction.extract(
        llm,
        said(("u", "我老公叫李伟"), ("u", "我们家住在城东"), ("u", "我自己是一点香菜都不吃的")),
        DAY,
    )
    assert "我自己是一点香菜都不吃的" in found.facts and "我老公不吃香菜" not in found.facts


async def test_the_persons_part_is_kept_when_the_model_mixed_in_the_assistant() -> None:
    llm = Replies(["我女儿对芒果过敏，可以用香蕉奶昔代替芒果冰沙"])
    found = await extraction.extract(
        llm,
        said(("u", "我女儿对芒果过敏"), ("a", "知道了，可以用香蕉奶昔代替芒果冰沙。")),
        DAY,
    )
    assert found.facts == ["我女儿对芒果过敏"]


async def test_english_is_kept_in_english() -> None:
    llm = Replies(["我对可待因过敏", "My son Leo is allergic to shellfish"])
    found = await extraction.extract(
        llm, said(("u", "My son Leo is allergic to shellfish, he swells up")), DAY
    )
    assert "My son Leo is allergic to shellfish" in found.facts
    assert all(not extraction.sources.chinese(f) for f in found.facts)
    assert any(r["reason"].startswith("translated") for r in found.rejected)


async def test_a_fact_in_the_assistants_voice_is_not_stored() -> None:
    llm = Replies(["你的儿子叫小宇，最近迷上了围棋"])
    found = await extraction.extract(
        llm, said(("u", "我儿子叫小宇"), ("a", "你的儿子叫小宇，最近迷上了围棋。")), DAY
    )
    assert found.facts == ["我儿子叫小宇"]
    assert any("assistant" in r["reason"] for r in found.rejected)


def test_asks_and_tag_questions_are_not_facts_nor_make_facts_questions() -> None:
    assert rejected("降压药的事，你千万别忘了") == "a request to remember, with no fact in it"
    assert rejected("她的钢琴课是礼拜几来着") == "a question"
    assert rejected("俺爹今年八十了，耳朵背，晓得不") is None
    assert tidy("俺爹今年八十了，耳朵背，晓得不") == "俺爹今年八十了，耳朵背"


async def test_an_english_statement_the_model_left_out_is_kept() -> None:
    found = await extraction.extract(
        Replies([]), said(("u", "My wife Anna is a night-shift nurse at St Mary's")), DAY
    )
    assert found.facts == ["My wife Anna is a night-shift nurse at St Mary's"]


async def test_the_reason_for_a_cancellation_is_not_a_memory() -> None:
    llm = Replies(["我们下周去莫干山的露营取消了", "营地说那几天要检修"])
    found = await extraction.extract(
        llm, said(("u", "下周去莫干山露营那个取消了"), ("u", "营地说那几天要检修")), DAY
    )
    assert "营地说那几天要检修" not in found.facts
    assert any(r["reason"].startswith("the reason given") for r in found.rejected)


async def test_a_name_nobody_said_and_a_request_to_do_are_not_stored() -> None:
    llm = Replies(["俺家猫叫咪咪", "我网购两袋大米送到家"])
    found = await extraction.extract(
        llm, said(("u", "俺家猫叫啥，你晓得不"), ("u", "帮俺网购两袋大米送到家")), DAY
    )
    assert found.facts == []
    reasons = " ".join(r["reason"] for r in found.rejected)
    assert "a name nobody said" in reasons and "asks the assistant" in reasons


def test_a_self_introduction_is_its_own_memory() -> None:
    from workers.extraction import introduction_apart

    assert introduction_apart("我叫郝建国，我老伴有胆结石，油炸的不能吃") == [
        "我叫郝建国",
        "我老伴有胆结石，油炸的不能吃",
    ]
    assert introduction_apart("Hello, I'm Ruth Adler, and my son Eli can't eat peanuts") == [
        "I'm Ruth Adler",
        "my son Eli can't eat peanuts",
    ]
    assert introduction_apart("我叫小李，今年三十") == ["我叫小李，今年三十"]
    assert introduction_apart("我女儿叫朵朵，她对鸡蛋过敏") == ["我女儿叫朵朵，她对鸡蛋过敏"]


async def test_a_name_said_in_the_same_breath_is_kept_when_the_model_drops_it() -> None:
    llm = Replies(["我婆婆周秀英血压高得很，医生喊她盐巴一定要少吃"])
    found = await extraction.extract(
        llm,
        said(("u", "喂，你好嘛，我叫谭晓燕，以后屋头的事我都跟你摆哈——我婆婆周秀英血压高得很，"
                   "医生喊她盐巴一定要少吃。")),
        DAY,
    )  # fmt: skip
    assert "我叫谭晓燕" in found.facts and "我叫谭晓燕" in found.recovered
    assert any("盐巴" in fact for fact in found.facts)


async def test_an_english_statement_naming_a_member_is_kept_when_the_model_translated_it() -> None:
    llm = Replies(["Lei对羊肉串很着迷"])  # translated: rejected
    people = [
        "My husband is Zhou Lei, he's an architect.",
        "Lei is mad about 羊肉串 — lamb skewers.",
    ]
    household = extraction.Household(names=("Zhou Lei", "Lei"))
    found = await extraction.extract(llm, said(*(("u", p) for p in people)), DAY, None, household)
    assert "Lei is mad about 羊肉串 — lamb skewers" in found.facts


def test_an_english_request_to_the_assistant_asks_to_do() -> None:
    from workers.extraction import _asks_to_do

    assert _asks_to_do("And remind me to pay the 物业费 on Friday.")
    assert _asks_to_do("Can you set a timer for twelve minutes?")
    assert not _asks_to_do("Can you remember that my wife is Anna")
    assert not _asks_to_do("Lei texts me every day")


def test_what_a_self_introduction_says_of_the_speaker_is_kept_apart() -> None:
    from workers.extraction import about_oneself

    relative = "我阿达心脏上放了两个支架，油大的肥的一口都不敢让他吃"
    said = f"你好，我是马海军，在西关开了个牛肉面馆子——{relative}。"
    assert about_oneself(said, [relative]) == "我在西关开了个牛肉面馆子"
    assert about_oneself("我叫小李，在银行上班，女儿对鸡蛋过敏", []) == "我在银行上班"
    assert about_oneself("喂，我叫谭晓燕，以后屋头的事我都跟你摆哈——我婆婆血压高", []) is None
    assert about_oneself("我叫林佩珊，在西屯做室内设计", ["我叫林佩珊，在西屯做室内设计"]) is None


def test_a_self_introduction_says_a_name_only_when_one_follows() -> None:
    from workers.extraction import introduced

    assert introduced("你好，我是马海军，在西关开了个牛肉面馆子") == "马海军"
    assert introduced("恁好啊，俺叫王德顺，俺老伴李桂兰有糖尿病") == "王德顺"
    assert introduced("Hi! I'm Emma, I teach English at an international school") == "Emma"
    assert introduced("我叫豆豆") == "豆豆"
    for not_a_name in ("我是老师，教数学", "我叫外卖", "我叫车了", "我是他妈妈", "我是说明天不去了",
                       "我是回民，大肉是不吃的", "I'm tired, really"):  # fmt: skip
        assert introduced(not_a_name) is None, not_a_name


def test_a_request_with_a_statement_clause_carries_its_fact() -> None:
    from memory.utterance_kinds import KindReading, UtteranceKind
    from workers.extraction import Kinds, carries, clauses_of

    said = "第三件事：我在第三个抽屉里放了备用钥匙，记得提醒我"
    assert clauses_of(said) == ["第三件事", "我在第三个抽屉里放了备用钥匙", "记得提醒我"]
    request = KindReading(UtteranceKind.REQUEST, 0.9, {}, lasting=0.1)
    statement = KindReading(UtteranceKind.STATEMENT, 0.7, {}, lasting=0.2)
    passing = KindReading(UtteranceKind.STATEMENT, 0.7, {}, lasting=0.06)
    unread = KindReading(UtteranceKind.STATEMENT, 0.7, {})
    assert carries(statement) == 1.0 and carries(request) == 0.1 and carries(None) == 0.0
    assert carries(unread) == 1.0 and carries(passing) == 0.06
    assert Kinds({said: request}).not_a_statement(said) is request
    assert Kinds({said: request}, clauses={said: carries(statement)}).not_a_statement(said) is None
    # a statement clause that says nothing lasting carries nothing: the request stays one
    assert Kinds({said: request}, clauses={said: carries(passing)}).not_a_statement(said) is request


async def test_a_passing_clause_does_not_make_a_request_a_fact(embedder: UseEmbedder) -> None:
    """The real heads: 「叫他下班顺路带瓶酱油回来」 is a statement, but of an errand, nothing
    lasting; the key in the drawer is kept."""
    from workers.extraction import carries, clauses_of

    reader = _reader(embedder)
    for said, kept in (("给志刚发条消息，叫他下班顺路带瓶酱油回来", False),
                       ("我在第三个抽屉放了备用钥匙，记得提醒我", True)):  # fmt: skip
        read = await reader([said, *clauses_of(said)])
        clauses = {said: max(carries(read[c]) for c in clauses_of(said))}
        assert (extraction.Kinds({said: read[said]}, clauses=clauses).not_a_statement(said)
                is None) is kept, said  # fmt: skip


def test_a_fact_that_reads_as_a_request_is_the_request_copied_out() -> None:
    from workers.extraction import asks_the_assistant

    alarm = KindReading(UtteranceKind.REQUEST, 0.98, {}, lasting=0.31)
    assert asks_the_assistant(alarm)
    assert not asks_the_assistant(KindReading(UtteranceKind.REQUEST, 0.8, {}, lasting=0.31))
    assert not asks_the_assistant(KindReading(UtteranceKind.STATEMENT, 0.99, {}, lasting=0.9))
    assert not asks_the_assistant(None)


def test_a_fact_that_asks_a_question_is_the_question_copied_out() -> None:
    from workers.extraction import asks_the_assistant

    asked = KindReading(UtteranceKind.MEMORY_QUESTION, 0.73, {}, lasting=0.07)
    assert asks_the_assistant(asked, "我们这儿明早零下多少度")
    assert not asks_the_assistant(asked, "俺老婆吃啥都爱蘸大酱")  # 啥 as "anything"


def test_a_request_clause_is_taken_out_of_a_fact() -> None:
    from workers.extraction import without_requests

    assert without_requests("水费也该交了，你帮我交一下") == "水费也该交了"
    assert without_requests("帮我设个闹钟") == "帮我设个闹钟"  # the other checks decide
    assert without_requests("我对花生过敏，你帮我记着点") == "我对花生过敏，你帮我记着点"


def test_an_introduction_with_是_or_係_is_apart_only_before_a_name() -> None:
    from workers.extraction import introduction_apart

    assert introduction_apart("我係何婉仪，我老公对虾过敏")[0] == "我叫何婉仪"
    assert introduction_apart("我是护士，我老公是司机") == ["我是护士，我老公是司机"]
    english = introduction_apart("I'm Nina, Nina Park — my son Leo can't have dairy")
    assert english == ["I'm Nina", "my son Leo can't have dairy"]


def test_chinese_words_nobody_said_in_an_english_session_are_a_translation() -> None:
    from workers.extraction import _CJK_RUN

    said = "Our dog Biscuit can't have grapes. His 兽医 said so."
    assert any(run not in said for run in _CJK_RUN.findall("所以葡萄 none of it near Biscuit"))
    assert not any(run not in said for run in _CJK_RUN.findall("Biscuit's 兽医 said no grapes"))
