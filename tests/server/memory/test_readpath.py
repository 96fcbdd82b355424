"""The read path on a Chinese household fixture: real embedder, real Qdrant Edge engine."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from config.settings import load_settings
from memory import terms
from memory.importer import MemoryLine, import_memories
from memory.schema import Decay, Memory, MemoryClass, PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.memory.household import HouseholdNames
from server.memory.readpath import EXPIRY_SLACK, ReadPath, _concerns, _grounds
from server.memory.render import RELATED_GROUP, SAFETY_GROUP
from server.understanding import lookup
from server.understanding.question import Question
from tests.memory.conftest import LI, ZHANG


def texts(recall_part: list) -> list[str]:  # type: ignore[type-arg]
    return [r.memory.text for r in recall_part]


async def test_implicit_recall_puts_the_wifes_allergy_in_the_safety_group(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(ZHANG, "订个海鲜礼包送我老婆")
    assert "我老婆对海鲜过敏，尤其是虾，一吃就起疹子" in texts(recall.safety)
    assert "我老婆对海鲜过敏，尤其是虾，一吃就起疹子" not in texts(recall.related)
    assert recall.block.index(SAFETY_GROUP) < recall.block.index("我老婆对海鲜过敏")
    assert recall.round_trips <= 2


@pytest.mark.parametrize(
    "question",
    ["今天天气怎么样", "放首周杰伦的歌", "帮我写个Python排序函数", "现在几点了", "把灯关了",
     "讲个笑话", "一加一等于几", "明天会下雨吗", "音量调大一点", "你叫什么名字"],
)  # fmt: skip
async def test_noise_turns_inject_nothing(read_path: ReadPath, question: str) -> None:
    recall = await read_path.recall(ZHANG, question)
    assert recall.block == ""
    assert recall.safety == () and recall.related == ()


async def test_same_entity_completion_reaches_the_nickname(read_path: ReadPath) -> None:
    recall = await read_path.recall(ZHANG, "我女儿能吃花生酱吗")
    peanut = next(r for r in recall.safety if r.memory.text == "小橙子对花生过敏")
    assert peanut.why == "entity" and peanut.promoted
    assert recall.round_trips == 2


async def test_entity_limit_zero_turns_completion_off(read_path: ReadPath) -> None:
    read_path.settings = read_path.settings.model_copy(update={"entity_limit": 0})
    recall = await read_path.recall(ZHANG, "我女儿能吃花生酱吗")
    assert "小橙子对花生过敏" not in texts(recall.safety)
    assert recall.round_trips == 1


async def test_family_meal_surfaces_every_family_safety_constraint(read_path: ReadPath) -> None:
    recall = await read_path.recall(ZHANG, "周末带家里人出去吃饭要注意什么")
    safety = texts(recall.safety)
    for expected in ["我老婆对海鲜过敏，尤其是虾，一吃就起疹子", "小橙子对花生过敏",
                     "爸爸有高血压，不能吃太咸的东西"]:  # fmt: skip
        assert expected in safety


async def test_direct_safety_hit_is_promoted_not_left_in_related(read_path: ReadPath) -> None:
    recall = await read_path.recall(ZHANG, "妈妈吃药要注意什么")
    hit = next(r for r in recall.safety if r.memory.text.startswith("妈妈每天早上吃降压药"))
    assert hit.why == "direct" and hit.group == "safety"
    assert all(r.memory.cls.value != "safety" for r in recall.related)


async def test_expired_events_never_appear(read_path: ReadPath) -> None:
    for question in ["体检是什么时候", "我什么时候去医院", "十月八号有什么安排"]:
        recall = await read_path.recall(ZHANG, question)
        assert "十月八号上午去医院做体检" not in texts(recall.safety + recall.related)
    future = await read_path.recall(ZHANG, "小橙子什么时候打疫苗")
    assert "下周三下午三点要带小橙子去打疫苗" in texts(future.related)


async def test_one_persons_memories_never_appear_for_another(read_path: ReadPath) -> None:
    for question in ["订个海鲜礼包送我老婆", "我女儿叫什么名字", "周末带家里人出去吃饭要注意什么",
                     "我住在哪里", "帮我点杯咖啡"]:  # fmt: skip
        recall = await read_path.recall(LI, question)
        assert all(r.memory.person == LI for r in recall.safety + recall.related)
    mine = await read_path.recall(LI, "我老公对什么药过敏")
    assert "我老公对青霉素过敏" in texts(mine.safety)
    assert all(r.memory.person == LI for r in mine.safety + mine.related)


async def test_related_group_carries_speaker_and_subject(read_path: ReadPath) -> None:
    recall = await read_path.recall(ZHANG, "小橙子喜欢什么")
    assert "小橙子特别喜欢恐龙" in texts(recall.related)
    assert RELATED_GROUP in recall.block
    # the text names its subject, so no 「关于小橙子」; the speaker once for the block or per line
    line = next(x for x in recall.block.splitlines() if "小橙子特别喜欢恐龙" in x)
    assert "关于" not in line
    assert "张伟说" in line or recall.block.startswith("<memory>（以下都是张伟说的）")
    assert recall.as_json()["groups"]["related"][0]["speaker"] == "张伟"  # type: ignore[index]


async def test_timings_cover_every_step(read_path: ReadPath) -> None:
    recall = await read_path.recall(ZHANG, "我老婆对什么过敏")
    assert set(recall.timings_ms) == {"embed", "round1", "round2", "render", "total"}
    assert all(v >= 0 for v in recall.timings_ms.values())


async def test_expired_hits_never_use_up_the_direct_limit(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """The direct search leaves expiry to the read path (EXPIRY_SLACK extra hits); when expired
    memories fill the whole page, round 2 asks again with the engine excluding them (the
    lexical round, which would also find the live one, is off to watch the direct search)."""
    days = ["十月一", "十月二", "十月三", "十月四", "十月五", "十月六", "十月七", "十月九",
            "十月十", "十月十一", "十月十二", "十月十三"]  # fmt: skip
    past, future = 1_760_000_000.0, 4_102_444_800.0
    expired = [
        Memory(f"{day}号上午去医院做体检", ZHANG, MemoryClass.EVENT, Decay.TIME, past, "我")
        for day in days
    ]
    live = Memory("明年一月五号上午去医院复查", ZHANG, MemoryClass.EVENT, Decay.TIME, future, "我")
    memories = [*expired, live]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    settings = load_settings().memory.model_copy(update={"lexical_limit": 0})
    assert len(expired) > settings.limit + EXPIRY_SLACK
    read_path = ReadPath(embedder, store, settings)
    recall = await read_path.recall(ZHANG, "我什么时候去医院做体检")
    recalled = {r.memory.text: r for r in recall.safety + recall.related}
    assert not any("上午去医院做体检" in t for t in recalled)
    assert recalled[live.text].why == "direct"  # ranked below every expired one, still found
    assert recall.round_trips == 2


async def test_an_unanchored_question_reaches_the_memory_it_shares_a_topic_with(
    read_path: ReadPath,
) -> None:
    """No 我, no relation, no name: 「吉他课」 is what both are about."""
    recall = await read_path.recall(ZHANG, "吉他课是几点来着？")
    assert "我每周四晚上七点有吉他课" in texts(recall.related)


@pytest.mark.parametrize(
    "question", ["杭州有多少人口？", "明天杭州会下雨吗？", "西湖是哪一年申遗成功的？"]
)
async def test_a_place_or_the_weather_in_common_is_not_a_topic(
    read_path: ReadPath, question: str
) -> None:
    """「我们家住在杭州西湖区」 shares 杭州 / 西湖区 with these, above the plain threshold: a
    world question about the household's city is still about the world."""
    recall = await read_path.recall(ZHANG, question)
    assert "我们家住在杭州西湖区" not in texts(recall.related), recall.block


def test_topic_terms_leave_out_when_words_and_names() -> None:
    assert terms.shared_topic("同学聚会定在几点？", "晚上六点和大学同学吃饭") == 1  # 同学
    assert terms.shared_topic("晚上吃什么", "周四晚上有吉他课") == 0  # only 晚上
    assert terms.shared_topic("明早六点半叫我起床", "周日晚上六点和同学吃饭") == 0  # a clock time
    assert terms.shared_topic("林芳几点下班", "林芳在医院上班", ["林芳"]) == 0  # only the name


JOB = "我上个月跳槽了，现在在一家做新能源汽车的公司当工程师"
WIFE_JOB = "老婆在银行上班"


@pytest.fixture
def jobs(store: EdgeMemoryStore, embedder: UseEmbedder) -> None:
    memories = [
        Memory(JOB, ZHANG, subject="我"),
        Memory(WIFE_JOB, ZHANG, subject="老婆", entities=("老婆",)),
        Memory("我在市医院当护士", LI, subject="我"),  # another family's
    ]
    store.upsert(memories, embedder.embed([m.text for m in memories]))


@pytest.mark.parametrize("question", ["我是做什么工作的？", "我是不是换工作了？"])
async def test_a_question_for_a_kind_of_fact_reaches_it_whatever_its_words(
    read_path: ReadPath, jobs: None, question: str
) -> None:
    """「工作」 and 「跳槽…当工程师」 are far apart for the embedder (cosine ~0.24): the memory
    is found by the kind of fact it states, and only the speaker's own job is."""
    recall = await read_path.recall(ZHANG, question)
    recalled = {r.memory.text: r for r in recall.related}
    assert recalled[JOB].why == "slot"
    assert WIFE_JOB not in recalled and "我在市医院当护士" not in recalled
    assert recall.round_trips <= 2


async def test_a_kind_of_fact_about_a_relation_is_theirs_not_the_speakers(
    read_path: ReadPath, jobs: None
) -> None:
    recall = await read_path.recall(ZHANG, "我老婆在哪上班？")
    assert WIFE_JOB in texts(recall.related)
    assert JOB not in texts(recall.related)


async def test_slot_limit_zero_turns_the_kind_search_off(read_path: ReadPath, jobs: None) -> None:
    read_path.settings = read_path.settings.model_copy(update={"slot_limit": 0})
    recall = await read_path.recall(ZHANG, "我是做什么工作的？")
    assert JOB not in texts(recall.related)


async def test_the_kind_search_takes_only_facts_about_whoever_is_asked(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """「我们家住哪」 asks about the speaker's home: not the mother's, not a visit's stay."""
    mother = Memory("妈妈住在苏州，一个人住", ZHANG, subject="妈妈", entities=("妈妈",))
    visit = Memory("下周妈妈要来杭州住一周", ZHANG, MemoryClass.EVENT, subject="妈妈",
                   entities=("妈妈",))  # fmt: skip
    store.upsert([mother, visit], embedder.embed([mother.text, visit.text]))
    recall = await read_path.recall(ZHANG, "我们家住在哪？")
    by_slot = [r.memory.text for r in recall.related if r.why == "slot"]
    assert mother.text not in by_slot and visit.text not in by_slot
    assert "我们家住在杭州西湖区" in texts(recall.related)
    recall = await read_path.recall(ZHANG, "我妈住在哪？")
    assert mother.text in texts(recall.related)


async def test_a_plan_at_a_time_brings_what_the_household_has_then(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """「周四晚上能约朋友吃饭吗」 and 「我每周四晚上七点有吉他课」 share no topic word: the weekday
    and the evening are what matter. Another evening, another person's Thursday: not. (The
    lexical round, which matches 周四 here, is off to watch the schedule search.)"""
    other = Memory("每周四晚上去游泳", LI, subject="我")
    store.upsert([other], embedder.embed([other.text]))
    read_path.settings = read_path.settings.model_copy(update={"lexical_limit": 0})
    recall = await read_path.recall(ZHANG, "周四晚上能约朋友吃饭吗？")
    recalled = {r.memory.text: r for r in recall.safety + recall.related}
    assert recalled["我每周四晚上七点有吉他课"].why == "schedule"
    assert other.text not in recalled
    later = await read_path.recall(ZHANG, "周四上午能约朋友喝咖啡吗？")
    assert "我每周四晚上七点有吉他课" not in texts(later.related)
    read_path.settings = read_path.settings.model_copy(update={"schedule_limit": 0})
    off = await read_path.recall(ZHANG, "周四晚上能约朋友吃饭吗？")
    assert "我每周四晚上七点有吉他课" not in texts(off.related)


async def test_the_kind_asked_about_a_named_person_comes_first(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """「我女儿最着迷什么」: the name round (小橙子, via 「女儿叫小橙子」) brings what she likes
    however many other memories about her rank higher (here the round keeps only one)."""
    about_her = ("小橙子上幼儿园大班", "小橙子的钢琴老师姓王", "小橙子每周六上午上钢琴课")
    others = [Memory(t, ZHANG, subject="小橙子", entities=("小橙子",)) for t in about_her]
    store.upsert(others, embedder.embed([m.text for m in others]))
    settings = read_path.settings.model_copy(update={"entity_limit": 1, "lexical_limit": 0})
    recall = await ReadPath(embedder, store, settings).recall(ZHANG, "我女儿最着迷什么东西？")
    assert "小橙子特别喜欢恐龙" in texts(recall.related)


async def test_a_word_match_about_the_relation_asked_starts_the_name_round(
    read_path: ReadPath,
) -> None:
    """「女儿叫小橙子，今年五岁」 shares 女儿 with the question (lexical round) and is about the
    relation it names (relation round): its name, 小橙子, reaches what she likes."""
    recall = await read_path.recall(ZHANG, "我女儿最着迷什么东西？")
    recalled = {r.memory.text: r for r in recall.safety + recall.related}
    assert recalled["女儿叫小橙子，今年五岁"].why == "relation"
    assert "小橙子特别喜欢恐龙" in recalled


async def test_a_looked_up_constraint_starts_no_name_round(read_path: ReadPath) -> None:
    """「买点海底捞的虾滑回来涮」 is looked up (food): 小橙子's peanut allergy is read as a safety
    net, which is no sign the request is about her — her dinosaurs and piano stay out."""
    recall = await read_path.recall(ZHANG, "买点海底捞的虾滑回来涮")
    assert recall.looked
    assert not any("小橙子" in t for t in texts(recall.related)), recall.block


@pytest.mark.parametrize(
    ("question", "lacking"),
    [("我想知道长城有多少年历史", None), ("我问你，中国有多少个省", None),
     ("你知道我最喜欢哪个球星吗", True), ("小橙子的班主任姓什么？", True),
     ("我想知道小橙子今年几岁了", False), ("老婆的生日是哪天？", False)],
)  # fmt: skip
async def test_memory_lacking_the_answer_is_judged_for_household_questions_only(
    read_path: ReadPath, question: str, lacking: bool | None
) -> None:
    """「我想知道…」 about the world is no household question (None: not judged, the model
    answers it); one memory plainly cannot answer is said to be so in the block."""
    recall = await read_path.recall(ZHANG, question)
    assert (recall.grounds.lacking if recall.grounds else None) is lacking
    assert ("这些记忆里没有这个问题的答案" in recall.block) is bool(lacking and recall.related)


def _about(text: str, subject: str, *names: str) -> Memory:
    return Memory(text, ZHANG, subject=subject, entities=(subject, *names))


@pytest.mark.parametrize(
    ("question", "lacking"),
    [("豆豆上次打疫苗是什么时候？", True), ("豆豆的狗粮换成什么味的了？", False),
     ("林芳在哪家医院上班？", False), ("林芳的瑜伽课几点开始？", True)],
)  # fmt: skip
def test_a_question_naming_someone_is_judged_on_what_is_about_them(
    question: str, lacking: bool
) -> None:
    """Naming 豆豆 and no one by relation, the question is not answered by 小橙子's vaccine; a
    line naming 林芳 brings what is about 老婆."""
    recalled = [
        _about("12月3日上午带小橙子去打疫苗", "小橙子"),
        _about("我们家的狗叫豆豆，是一只柯基", "豆豆", "狗"),
        _about("豆豆的狗粮从牛肉味换成了鸡肉味", "豆豆"),
        _about("我老婆叫林芳", "老婆", "林芳"),
        _about("老婆在市一医院当护士，经常上夜班", "老婆"),
        _about("老婆的瑜伽课从周一改到了每周二和周五晚上", "老婆"),
    ]
    grounds = _grounds(Question(question), recalled, 0.0)  # neither says 我 nor a relation
    assert grounds is not None and grounds.lacking is lacking


@pytest.mark.parametrize(
    ("person", "question", "theirs", "others"),
    [
        (ZHANG, "我有哪些过敏或者害怕的东西？", "我有幽闭恐惧症，不坐电梯", "我老婆对海鲜过敏"),
        (
            ZHANG,
            "我老婆对什么过敏？",
            "我老婆对海鲜过敏，尤其是虾，一吃就起疹子",
            "小橙子对花生过敏",
        ),
        # the speaker's own constraint, though it names a pet (猫)
        (LI, "我对什么过敏", "我对猫毛过敏", "我老公对青霉素过敏"),
    ],
)
async def test_a_constraint_of_someone_the_question_does_not_concern_is_left_out(
    read_path: ReadPath, person: PersonId, question: str, theirs: str, others: str
) -> None:
    recall = await read_path.recall(person, question)
    assert theirs in texts(recall.safety)
    assert not any(text.startswith(others) for text in texts(recall.safety + recall.related))
    assert any(m.text.startswith(others) for m in recall.unconcerned)  # found, and logged
    assert recall.as_json()["unconcerned"] == [m.text for m in recall.unconcerned]


@pytest.mark.parametrize(
    ("question", "lacking"),
    [("国庆去云南是坐飞机还是开车？", True), ("国庆去云南住几天？", True),
     ("云南的省会是哪里？", None), ("国庆节是几月几号？", None)],
)  # fmt: skip
def test_a_question_about_a_held_plan_is_a_household_question(
    question: str, lacking: bool | None
) -> None:
    """No 我, no one named, but two of its words are the family's plan: memory is judged (and
    lacks how they travel); a world question sharing one word with it is not judged."""
    recalled = [
        _about("我们打算今年国庆带全家去云南", "我"),
        _about("我在未来科技城的新能源汽车公司上班，开车过去要四十分钟", "我"),
    ]
    grounds = _grounds(Question(question), recalled, 0.0)  # neither says 我 nor a relation
    assert (grounds.lacking if grounds else None) is lacking


async def test_the_related_group_keeps_to_its_budget_targeted_hits_first(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """Every related line is prompt the model reads before its first word: 「老婆生日是哪天？」
    carries the birthday, not the seventh fact about her; a plan's schedule hit scores low and
    is kept before better-scoring likeness; what the budget left out is logged (``beyond``)."""
    about_her = ("老婆的生日是三月十二号", "老婆最喜欢的花是向日葵", "老婆喜欢看悬疑小说",
                 "老婆的小名叫芳芳", "老婆在市一医院当护士", "老婆的瑜伽课在每周二晚上",
                 "老婆周末喜欢去西湖边散步")  # fmt: skip
    memories = [Memory(t, ZHANG, subject="老婆", entities=("老婆",)) for t in about_her]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    assert read_path.settings.related_limit == "auto"
    budget = read_path.settings.related_budget(embedded_llm=True)
    assert budget and len(about_her) > budget
    open_ = ReadPath(embedder, store, read_path.settings.model_copy(update={"related_limit": 0}))
    everything = await open_.recall(ZHANG, "老婆生日是哪天？")
    assert len(everything.related) > budget and everything.beyond == ()
    hosted = await ReadPath(embedder, store, read_path.settings, embedded_llm=False).recall(
        ZHANG, "老婆生日是哪天？"
    )  # a hosted model reads every line: no budget
    assert texts(hosted.related) == texts(everything.related)
    recall = await read_path.recall(ZHANG, "老婆生日是哪天？")
    assert len(recall.related) == budget
    assert "老婆的生日是三月十二号" in texts(recall.related)
    assert set(texts(recall.related)) | set(texts(recall.beyond)) == set(texts(everything.related))
    assert recall.block.count("\n- ") == budget + len(recall.safety)
    assert recall.as_json()["beyond"] == texts(recall.beyond)
    plan = await read_path.recall(ZHANG, "周四晚上老婆能陪我去吃饭吗？")
    whys = {r.memory.text: r.why for r in plan.related}
    assert len(plan.related) <= budget
    assert whys.get("我每周四晚上七点有吉他课") == "schedule", whys


async def test_a_plan_counted_from_today_finds_what_is_on_that_weekday(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """「后天上午小橙子有什么安排」 on a Wednesday asks about Friday morning: the vaccine then is
    found by the schedule search, and kept first within the related budget (here one line)
    even though the direct search found it too, among likelier lines about her."""
    vaccine = Memory("周五上午带小橙子去打疫苗", ZHANG, MemoryClass.EVENT, Decay.TIME,
                     4_102_444_800.0, "小橙子", entities=("小橙子",))  # fmt: skip
    about_her = ("小橙子特别喜欢恐龙", "小橙子上幼儿园大班", "小橙子的钢琴老师姓王",
                 "小橙子最爱吃草莓", "小橙子周末喜欢去公园玩")  # fmt: skip
    others = [Memory(t, ZHANG, subject="小橙子", entities=("小橙子",)) for t in about_her]
    memories = [vaccine, *others]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    settings = read_path.settings.model_copy(update={"related_limit": 1, "lexical_limit": 0})
    one_line = ReadPath(embedder, store, settings)
    wednesday = time.mktime((2026, 12, 2, 12, 0, 0, 0, 0, -1))
    question = "后天上午小橙子有什么安排"
    recall = await one_line.recall(ZHANG, question, wednesday)
    assert texts(recall.related) == [vaccine.text], texts(recall.beyond)
    unscheduled = ReadPath(embedder, store, settings.model_copy(update={"schedule_limit": 0}))
    by_score = await unscheduled.recall(ZHANG, question, wednesday)
    assert len(by_score.related) == 1 and len(by_score.beyond) >= 4
    assert texts(by_score.related) != [vaccine.text], "by score alone it would be kept anyway"


async def test_the_budget_gives_way_when_only_a_line_past_it_holds_the_answer(
    read_path: ReadPath, store: EdgeMemoryStore, embedder: UseEmbedder
) -> None:
    """「老婆的瑜伽课几点开始？」 asks a clock time: the likeliest lines about her class hold none,
    the long one that does ranks below them. With a budget of one line the block would tell the
    model memory lacks the answer — so the budget gives way and every line goes in."""
    likely = (
        "老婆的瑜伽课在小区会所上",
        "老婆的瑜伽课是跟同事一起报的",
        "老婆的瑜伽课一节课要交一百块",
    )
    answer = "老婆说她们那个班每次都是晚上七点半开始上瑜伽课，教练姓刘，人特别好，一节要九十分钟"
    memories = [Memory(t, ZHANG, subject="老婆", entities=("老婆",)) for t in (*likely, answer)]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    settings = read_path.settings.model_copy(update={"related_limit": 1, "lexical_limit": 0})
    question = "老婆的瑜伽课几点开始？"
    everything = await ReadPath(
        embedder, store, settings.model_copy(update={"related_limit": 0})
    ).recall(ZHANG, question)
    assert answer in texts(everything.related)
    assert texts(everything.related)[0] != answer, "it must rank below a line without a time"
    assert everything.grounds is not None and not everything.grounds.lacking
    recall = await ReadPath(embedder, store, settings).recall(ZHANG, question)
    assert answer in texts(recall.related) and recall.beyond == ()
    assert recall.grounds is not None and not recall.grounds.lacking


async def test_chit_chat_injects_nothing_and_the_trace_says_so(read_path: ReadPath) -> None:
    from server.tools import ToolContext

    context = ToolContext(ZHANG, "dev", "s1")
    assert await read_path.prompt_block("谢谢你啊，今天辛苦了", context) is None
    assert context.trace.kind == "chitchat"
    memory = context.trace.memory or {}
    assert memory["groups"] == {"safety": [], "related": []}
    assert context.trace.remind == []


async def test_a_request_hears_the_constraint_closest_in_meaning(read_path: ReadPath) -> None:
    """No word of 「小橙子对花生过敏」 in the request, yet it is the constraint said first."""
    from server.tools import ToolContext

    context = ToolContext(ZHANG, "dev", "s1")
    await read_path.prompt_block("小橙子想吃士力架", context)
    assert any("花生" in line for line in context.trace.remind)


async def test_a_plan_told_as_a_statement_hears_the_constraint_a_fact_does_not(
    read_path: ReadPath,
) -> None:
    """A plan (the acts head) is due its constraint before it happens; a past event is not
    reminded of a constraint only close in meaning."""
    plan = await read_path.recall(ZHANG, "周末带老婆去海边吃大排档")
    assert plan.kind is not None and plan.kind.kind.value == "statement" and plan.kind.plans
    assert any("海鲜" in m.text for m in plan.applies)
    past = await read_path.recall(ZHANG, "老婆上个月去海边玩了一趟")
    assert past.kind is not None and not past.kind.plans
    assert not past.applies


MONDAY = 1_764_547_200.0  # a Monday


async def test_the_read_path_reads_its_question_once_and_hands_it_on(
    read_path: ReadPath,
) -> None:
    recall = await read_path.recall(ZHANG, "给我女儿买个芒果蛋糕", MONDAY)
    understood = recall.understood
    assert understood is not None and understood.text == recall.question
    assert understood.vector is not None and understood.kind == recall.kind
    assert understood.now == MONDAY


async def test_a_question_about_memory_no_gate_answers_hears_the_nearest(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """A thermometer stored in English, asked after by what it does: no word, name or relation
    in common, yet the person asked memory — the nearest are read, never for chit-chat."""
    chen = PersonId("chen")
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    memories = [
        Memory("The ear thermometer is in the second drawer of the TV cabinet", chen),
        Memory("我女儿周三下午上游泳课", chen),
        Memory("车钥匙挂在门口的挂钩上", chen),
    ]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    settings = load_settings().memory
    question = "塞进耳朵里量体温的那个东西放哪了"
    off = await ReadPath(embedder, store, settings.model_copy(update={"question_nearest": 0}))\
        .recall(chen, question)  # fmt: skip
    assert off.related == () and off.safety == ()
    read_path = ReadPath(embedder, store, settings)
    recall = await read_path.recall(chen, question)
    assert [(r.memory.text, r.why) for r in recall.related][:1] == [(memories[0].text, "nearest")]
    assert "thermometer" in recall.block
    thanks = await read_path.recall(chen, "谢谢你啊")
    assert thanks.related == () and thanks.safety == ()
    store.close()


async def _named_household(
    tmp_path: Path, embedder: UseEmbedder, rows: list[tuple[str, str, str | None]]
) -> tuple[EdgeMemoryStore, HouseholdNames]:
    """A store holding ``rows`` (text, class, subject) for ZHANG, and its household's names
    read as a session opening reads them."""
    store = EdgeMemoryStore(tmp_path / "edge", embedder.dim)
    lines = [MemoryLine(text=t, cls=c, subject=w, source="test") for t, c, w in rows]
    import_memories(lines, ZHANG, embedder, store)
    names = HouseholdNames(store, 0)
    await names.read(ZHANG)
    return store, names


async def test_a_household_name_the_question_says_is_searched_in_the_first_round(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """「孙玉芳搬东西有啥要注意的」: on a household's store no hit of the question named 玉芳 by
    meaning, so her constraint was not found; with the household's names known before the turn
    (read in the background, ``server.memory.household``) round 1 searches what is about her,
    in the same two round trips."""
    store, names = await _named_household(tmp_path, embedder, [
        ("玉芳骨质疏松，腰椎骨折过一次：超过5斤的东西别让她搬，别弯腰提重物", "safety", "玉芳"),
        ("玉芳甲减，每天早上空腹吃优甲乐", "safety", "玉芳"),
        ("孙子豆豆对鸡蛋过敏，加了鸡蛋的点心都不能给他吃", "safety", "豆豆"),
        ("我在吃辛伐他汀降血脂，不能吃西柚", "safety", "我"),
        ("玉芳爱听秦腔，最喜欢《三滴血》", "preference", "玉芳"),
        ("电子血压计在卧室床头柜第二个抽屉里", "fact", None),
    ])  # fmt: skip
    settings = load_settings().memory
    question = "孙玉芳搬东西有啥要注意的"
    try:
        assert "玉芳" in names.members(ZHANG)
        assert names.known(ZHANG) == ()  # the recogniser's limit: none asked for
        read_path = ReadPath(embedder, store, settings, names=names.members)
        assert read_path._names_said(ZHANG, question, ()) == ("玉芳",)
        assert read_path._names_said(ZHANG, "我想喝杯热牛奶", ()) == ()
        recall = await read_path.recall(ZHANG, question)
        assert any("骨质疏松" in t for t in texts(recall.safety)), recall.block
        assert recall.round_trips <= 2
    finally:
        store.close()


async def test_a_name_searched_in_round_1_leaves_a_word_match_found_by_meaning(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """The name round run early (``ReadPath.names``) brings "entity" hits, as in round 2: a
    constraint the lexical round found stays one found by meaning, so a request naming nothing
    it is about still hears it as the closest (「甜甜说想吃赤甲红…」 and her shellfish allergy)."""
    store, names = await _named_household(tmp_path, embedder, [
        ("甜甜对虾和螃蟹过敏，吃一口浑身起疙瘩", "safety", "甜甜"),
        ("燕子有甲亢，海带、紫菜这些含碘高的都不能吃", "safety", "燕子"),
        ("我对磺胺类的药过敏", "safety", "我"),
        ("甜甜在幼儿园上中班", "fact", "甜甜"),
    ])  # fmt: skip
    try:
        read_path = ReadPath(embedder, store, load_settings().memory, names=names.members)
        recall = await read_path.recall(ZHANG, "甜甜说想吃赤甲红，明儿早市买几个回来给她蒸上")
        whys = {r.memory.text: r.why for r in recall.safety}
        assert whys.get("甜甜对虾和螃蟹过敏，吃一口浑身起疙瘩") in ("direct", "lexical"), whys
        assert [m.subject for m in recall.applies] == ["甜甜"]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("question", "concerned"),
    [("今晚涮火锅，强子点名要毛肚鸭肠，鸣鸣的蘸碟调花生酱", True),
     ("老爷子心口闷，鸣鸣说让他加一片阿司匹林", True),
     ("给鸣鸣调个花生酱蘸碟", False)],
)  # fmt: skip
def test_a_constraint_is_theirs_whom_the_request_calls_by_the_word_it_opens_with(
    question: str, concerned: bool
) -> None:
    """The constraint's subject is a relation word; the person calls him by a nickname the name
    readers do not take for one, and the constraint's text opens with it."""
    gout = Memory(
        "强子有痛风，啤酒和动物内脏都要忌口", ZHANG, cls=MemoryClass.SAFETY, subject="老公"
    )
    heart = Memory("老爷子有房颤，天天吃华法林", ZHANG, cls=MemoryClass.SAFETY, subject="我爸")
    memory = heart if "老爷子" in question else gout
    scope = lookup.scope_of(question, ["鸣鸣"], ["鸣鸣"])
    assert not scope.covers(question, memory)  # by whom the request names, not his
    assert _concerns(question, scope, ["鸣鸣"], memory) is concerned


async def test_an_anchored_question_about_memory_hears_the_plan_of_the_day_it_names(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """「下礼拜四我有啥安排」 says 我 and a day, nothing of the plan: the Thursday plan is read
    (a plan at any time of the day answers it), not only the closest line about the speaker."""
    rows: list[tuple[str, str, str | None]] = [
        ("下周四下午去市口腔医院拔智齿，要空腹", "event", "我"),
        ("我每周六上午去游泳", "fact", "我"),
        ("儿子叫乐乐，上小学二年级", "fact", "儿子"),
        ("我喜欢喝茉莉花茶", "preference", "我"),
        ("车钥匙挂在门口的挂钩上", "fact", "我"),
    ]
    store, _ = await _named_household(tmp_path, embedder, rows)
    recall = await ReadPath(embedder, store, load_settings().memory).recall(
        ZHANG, "下礼拜四我有啥安排"
    )
    assert ("下周四下午去市口腔医院拔智齿，要空腹", "schedule") in [
        (r.memory.text, r.why) for r in recall.related
    ]
    assert recall.grounds is None or not recall.grounds.lacking  # the plan is the answer
    assert "没有这个问题的答案" not in recall.block
    store.close()


async def test_a_question_about_memory_the_lookup_alone_answered_hears_the_nearest(
    tmp_path: Path, embedder: UseEmbedder
) -> None:
    """A question about memory that touches a safety topic brings the constraints; when they
    are all that was found, the nearest memories are read beside them."""
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    memories = [
        Memory("血糖仪和试纸放在爸爸床头柜第二层", ZHANG),
        Memory(
            "爸爸有糖尿病，甜食和含糖饮料都要少碰", ZHANG, cls=MemoryClass.SAFETY, subject="爸爸"
        ),
        Memory("我每周六上午去游泳", ZHANG),
        Memory("车钥匙挂在门口的挂钩上", ZHANG),
        Memory("儿子叫乐乐，上小学二年级", ZHANG),
        Memory("我喜欢喝茉莉花茶", ZHANG),
    ]
    store.upsert(memories, embedder.embed([m.text for m in memories]))
    # the other routes to an unanchored question's memory, off: only the lookup finds anything
    settings = load_settings().memory.model_copy(
        update={"prominence": 0, "topic_terms": 0, "lexical_limit": 0, "cue_limit": 0}
    )
    question = "测血糖的那个东西在哪"
    recall = await ReadPath(embedder, store, settings).recall(ZHANG, question)
    off = await ReadPath(embedder, store, settings.model_copy(update={"question_nearest": 0}))\
        .recall(ZHANG, question)  # fmt: skip
    assert memories[1].text in texts(off.safety) and texts(off.related) == []
    assert [(r.memory.text, r.why) for r in recall.related][:1] == [(memories[0].text, "nearest")]
    store.close()
