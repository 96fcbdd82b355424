"""The merge rules: a new value replaces the old, a correction fixes the right memory, a
retraction removes it, a restatement adds nothing; a new constraint never replaces another."""

from __future__ import annotations

from workers.slots import Candidate, decide, slot_of

NAMES = ["小橙子", "乐乐", "年糕"]


def c(text: str, subject: str, score: float) -> Candidate:
    return Candidate("k-" + text, text, subject, score)


def test_slots_read_subject_and_kind() -> None:
    assert slot_of("我们家上个月搬到滨江区了", NAMES) == slot_of("我们家住在杭州西湖区", NAMES)
    assert slot_of("我的吉他课从周四改到周五了", NAMES).kind == "schedule:吉他课"  # type: ignore[union-attr]
    assert slot_of("乐乐现在已经上三年级了", NAMES).subject == "乐乐"  # type: ignore[union-attr]
    assert slot_of("我妈对青霉素过敏", NAMES).subject == "妈妈"  # type: ignore[union-attr]
    assert slot_of("我喜欢喝绿茶", NAMES) is None


def test_a_new_value_supersedes_the_old_one() -> None:
    moved = decide("我们家搬到滨江区了", None, [c("我们家住在杭州西湖区", "我", 0.47)], NAMES)
    assert moved is not None and moved.event == "UPDATE" and moved.rule == "same slot"
    job = decide("我跳槽了，现在在网易上班", None, [c("我在阿里巴巴工作", "我", 0.42)], NAMES)
    assert job is not None and job.event == "UPDATE"
    said = decide("我老公现在改行当老师了", None, [c("我老公是医生", "老公", 0.5)], NAMES)
    assert said is not None and said.event == "UPDATE"  # an occupation said with 是/当


def test_someone_elses_value_is_not_replaced() -> None:
    assert decide("我女儿叫小橙子", None, [c("我儿子叫乐乐", "儿子", 0.51)], NAMES) is None


def test_a_correction_moves_a_constraint_to_the_right_person() -> None:
    said = "刚想起来，对青霉素过敏的是我妈，不是我爸"
    fixed = decide("我妈对青霉素过敏", said, [c("我爸对青霉素过敏", "爸爸", 0.87)], NAMES)
    assert fixed is not None and fixed.event == "UPDATE" and fixed.rule == "correction"


def test_a_new_allergy_never_replaces_another() -> None:
    stored = [c("我老婆对海鲜过敏，尤其是虾", "老婆", 0.8)]
    assert decide("我老婆对芒果过敏", None, stored, NAMES) is None
    again = decide("我老婆海鲜过敏，虾绝对不能吃", "再说一遍", stored, NAMES)
    assert again is not None and again.event == "NONE" and again.rule == "restatement"


def test_a_retraction_deletes_what_it_names_and_is_not_stored() -> None:
    planned = [c("下周三下午带小橙子去打疫苗", "小橙子", 0.51)]
    gone = decide("打疫苗的事取消了", None, planned, NAMES)
    assert gone is not None and gone.event == "DELETE" and gone.target == planned[0]
    unrelated = decide("出差取消了", None, planned, NAMES)
    assert unrelated is not None and unrelated.event == "NONE" and unrelated.target is None


def test_one_lesson_of_a_weekly_class_changes_nothing() -> None:
    weekly = [c("我每周四晚上七点有吉他课", "我", 0.8)]
    lesson = decide("明天（11月26日）周四，晚上还是七点的吉他课", None, weekly, NAMES)
    assert lesson is not None and lesson.event == "NONE"
    moved = decide("我的吉他课改到周五了", None, weekly, NAMES)
    assert moved is not None and moved.event == "UPDATE"


def test_a_cancellation_reaches_the_planned_event_it_names() -> None:
    trip = Candidate("k-trip", "后天去上海出差", "我", 0.35, event=True)
    habit = Candidate("k-habit", "我出差的时候喜欢住全季", "我", 0.5)
    gone = decide("我出差取消了", None, [habit, trip], NAMES)
    assert gone is not None and gone.event == "DELETE" and gone.target == trip


def test_a_cancellation_in_the_persons_words_reaches_a_distant_plan() -> None:
    """The model's fact keeps one of the words (「我出差取消了」, ~0.27 similar); what the person
    said names two (上海, 出差) of the plan, and only that plan."""
    trip = Candidate("k-trip", "后天去上海出差", "我", 0.27, event=True)
    show = Candidate("k-show", "下周去上海看展", "我", 0.25, event=True)
    said = "算了，上海不去了，出差取消了"
    gone = decide("我出差取消了", said, [show, trip], NAMES)
    assert gone is not None and gone.event == "DELETE" and gone.target == trip
    kept = decide("我出差取消了", "出差取消了", [show, trip], NAMES)
    assert kept is not None and kept.event == "NONE"


def test_a_changed_date_updates_the_plan_it_names() -> None:
    plan = [c("周六（11月28日）我要带我妈去体检", "妈妈", 0.45)]
    moved = decide("体检改到下周六（12月5日）了", "哦不对，不是这周六，体检改到下周六了", plan)
    assert moved is not None and moved.event == "UPDATE" and moved.target == plan[0]
    other = decide("会议改到下周了", None, plan)
    assert other is None


def _learned(*texts: str) -> dict[str, tuple[str, ...]]:
    """What the shipped slot heads read in each text (the real embedder)."""
    from memory import slot_heads
    from providers.embedder import UseEmbedder

    embedder = UseEmbedder()
    vectors = embedder.embed(list(texts))
    found = {t: slot_heads.stated(v, embedder.name, t) for t, v in zip(texts, vectors, strict=True)}
    return {t: k for t, k in found.items() if k is not None}


def test_a_job_said_in_other_words_is_replaced_and_a_hobby_is_not() -> None:
    """The slot heads see a job where no pattern word is: the new one replaces the old, and a
    weekly hobby sharing its hours is left alone (times name no topic)."""
    old = "俺在国棉五厂当机修工，三班倒，都干了二十多年了"
    hobby = "每礼拜一、三、五早上六点，俺去紫荆山公园打太极"
    new = "俺现在在物流园给人家看大门，天天白班，早八点到晚六点"
    learned = _learned(old, hobby, new)
    assert "work" in learned[old] and "work" in learned[new] and "work" not in learned[hobby]
    assert slot_of(old, NAMES) is None  # the patterns alone see no job in it
    decision = decide(new, None, [c(hobby, "我", 0.45), c(old, "我", 0.3)], NAMES, learned)
    assert decision is not None and decision.event == "UPDATE"
    assert decision.target is not None and decision.target.text == old


def test_a_constraint_the_safety_head_reads_fills_no_job_slot() -> None:
    """A condition is many-valued: it never replaces the job it sits beside in memory, though
    a slot head may read work in it."""
    job = "我在一家糖厂管设备检修，榨季的时候经常加班"
    condition = "我有慢阻肺，夜里睡觉一直开着制氧机吸氧"
    learned = {job: ("work",), condition: ("constraint", "work")}
    assert slot_of(condition, NAMES, learned=learned[condition]) == slot_of("我对青霉素过敏")
    decision = decide(condition, None, [c(job, "我", 0.4)], NAMES, learned)
    assert decision is None or decision.event != "UPDATE"


def test_a_constraint_taken_back_is_deleted_not_kept_negated() -> None:
    said = "哎我搞错了，乐乐对猫毛不过敏，是他同学过敏"
    stored = [c("乐乐对猫毛过敏，一摸猫就打喷嚏", "乐乐", 0.71), c("乐乐喜欢踢足球", "乐乐", 0.4)]
    taken = decide("乐乐对猫毛不过敏", said, stored, NAMES)
    assert taken is not None and taken.event == "DELETE"
    assert taken.target is not None and "猫毛" in taken.target.text
    english = decide(
        "Sam's not allergic to anything, I mixed him up with his cousin", None,
        [c("Sam is allergic to kiwi", "Sam", 0.55)], ["Sam"],
    )  # fmt: skip
    assert english is not None and english.event == "DELETE"
    other = decide("乐乐对猫毛不过敏", said, [c("我妈对猫毛过敏", "妈妈", 0.8)], NAMES)
    assert other is None or other.event != "DELETE"  # someone else's constraint stays


def test_a_constraint_said_again_in_other_words_adds_nothing() -> None:
    stored = [c("年糕对花生过敏的", "年糕", 0.66)]
    again = decide("年糕碰不得花生的，一吃就过敏", None, stored, NAMES)
    assert again is not None and again.event == "NONE" and again.rule == "restatement"
    more = decide("年糕对花生和芝麻都过敏", None, stored, NAMES)
    assert more is None or more.event != "NONE"  # 芝麻 is new: not a restatement


def test_a_correction_to_the_other_one_moves_the_fact_to_the_other_member() -> None:
    links = {"石头": "儿子", "小米": "女儿", "王建": "老公"}
    said = "上回说的猕猴桃过敏那个我搞混了，不是那个娃，是另外一个"
    stored = [c("石头对猕猴桃过敏", "石头", 0.62), c("石头每周六学围棋", "石头", 0.5)]
    fact = "不是那个娃，是另外一个对猕猴桃过敏"
    moved = decide(fact, said, stored, ["石头", "小米"], None, links)
    assert moved is not None and moved.event == "UPDATE"
    assert moved.text == "小米对猕猴桃过敏"
    three = {**links, "豆豆": "儿子"}  # two other children: not guessed
    unsure = decide(fact, said, stored, ["石头", "小米"], None, three)
    assert unsure is None or unsure.text != "小米对猕猴桃过敏"


def test_a_relatives_name_never_replaces_the_speakers_own() -> None:
    stored = [c("我叫王德顺", "我", 0.55)]
    grandson = decide("俺那个外孙，大名叫张浩然，俺都喊浩然小虎", None, stored, [])
    assert grandson is None or grandson.event != "UPDATE"


def test_a_retraction_of_a_constraint_reaches_it_not_a_plan_of_the_same_member() -> None:
    said = (
        "And scrap what I said about Ollie and sesame — the allergy test came back negative, "
        "he's fine with it."
    )
    dentist = Candidate(
        "k-dentist", "Tomorrow at half three Ollie's got the dentist", "Ollie", 0.45, event=True
    )
    sesame = c("Oh, and Ollie's allergic to sesame, so no 麻酱 on his noodles, ever.", "Ollie", 0.5)
    decided = decide(
        "the allergy test came back negative, Ollie's fine with it", said, [dentist, sesame],
        ["Ollie", "Lei"],
    )  # fmt: skip
    assert decided is not None and decided.event == "DELETE"
    assert decided.target is sesame


def test_a_household_name_alone_does_not_name_the_plan_called_off() -> None:
    dentist = Candidate(
        "k-dentist", "Tomorrow at half three Ollie's got the dentist", "Ollie", 0.5, event=True
    )
    decided = decide("Ollie's football is cancelled this week", None, [dentist], ["Ollie"])
    assert decided is None or decided.target is None


def test_a_new_dose_is_written_into_the_constraint_that_names_the_drug() -> None:
    said = "医生把硝苯地平加到一天两颗了，早上一颗晚上一颗。"
    stored = [
        c("婆婆的降压药是硝苯地平，每天吃一颗，医生说吃这个药西柚、柚子都不能吃", "婆婆", 0.62),
        c("婆婆血压高，盐巴要少吃", "婆婆", 0.5),
    ]
    decided = decide("婆婆，医生把硝苯地平加到一天两颗了，早上一颗晚上一颗", said, stored, NAMES)
    assert decided is not None and decided.event == "UPDATE"
    assert decided.text is not None and "两颗" in decided.text and "一颗" not in decided.text
    assert "西柚" in decided.text  # the rest of the memory stays
