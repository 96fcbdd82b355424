"""Tags the model may not get wrong: subject, safety, recurring schedules, resolved expiry."""

from __future__ import annotations

import datetime as dt

import pytest

from memory.schema import Decay, MemoryClass
from workers.tag_rules import settle
from workers.tagging import Tags

DAY = dt.date(2026, 11, 25)


def test_the_subject_is_read_off_the_text() -> None:
    doctor = Tags(MemoryClass.FACT, Decay.VOLUME, None, "医生")
    tags = settle("我妈在吃降压药，医生交代不能吃西柚", doctor, DAY, [])
    assert tags.subject == "妈妈" and tags.cls is MemoryClass.SAFETY
    leaked = Tags(MemoryClass.FACT, Decay.VOLUME, None, "说话人自己写「我」")
    assert settle("我在网易上班", leaked, DAY, []).subject == "我"
    assert settle("年糕肠胃不好，不能喝牛奶", None, DAY, ["年糕"]).subject == "年糕"


def test_safety_follows_the_text_not_the_model() -> None:
    wrong = Tags(MemoryClass.SAFETY, Decay.VOLUME, None, "我")
    assert settle("我在一家医院当护士", wrong, DAY, []).cls is MemoryClass.FACT
    missed = Tags(MemoryClass.FACT, Decay.VOLUME, None, "老婆")
    assert settle("我老婆对海鲜过敏", missed, DAY, []).cls is MemoryClass.SAFETY


def test_a_weekly_class_never_expires_and_a_dated_event_does() -> None:
    as_event = Tags(MemoryClass.EVENT, Decay.TIME, 1.0, "我")
    weekly = settle("我每周四晚上七点有吉他课", as_event, DAY, [])
    assert weekly.cls is MemoryClass.FACT and weekly.decay is Decay.VOLUME
    assert weekly.expires_at is None
    vaccine = settle("下周三（12月2日）下午带小橙子去打疫苗", None, DAY, ["小橙子"])
    assert vaccine.cls is MemoryClass.EVENT and vaccine.decay is Decay.TIME
    assert vaccine.expires_at is not None
    assert dt.datetime.fromtimestamp(vaccine.expires_at).date() == dt.date(2026, 12, 2)


@pytest.mark.parametrize(
    "text",
    [
        "我外公一天吃三回美多芭",
        "我妈前年查出来肾结石",
        "医生说我老婆浓茶菠菜少吃",
        "我爸确诊了帕金森",
    ],
)
def test_regimens_diagnoses_and_doctors_orders_are_safety(text: str) -> None:
    assert settle(text, None, dt.date(2026, 12, 3), ()).cls is MemoryClass.SAFETY


def test_an_event_naming_no_time_is_a_fact() -> None:
    tags = Tags(MemoryClass.EVENT, Decay.TIME, 1_900_000_000.0, "狗")
    settled = settle("咱家有条土狗叫大黄，五岁了", tags, dt.date(2026, 12, 3), ())
    assert settled.cls is MemoryClass.FACT and settled.expires_at is None


@pytest.mark.parametrize("text", ["我老公一吃桃嗓子就发痒", "I can't take anything with codeine"])
def test_reactions_and_english_constraints_are_safety(text: str) -> None:
    assert settle(text, None, dt.date(2026, 12, 3), ()).cls is MemoryClass.SAFETY


def test_the_learned_safety_reading_decides_beside_the_model() -> None:
    fact = Tags(MemoryClass.FACT, Decay.VOLUME, None, "猫")
    said_safety = Tags(MemoryClass.SAFETY, Decay.VOLUME, None, "猫")
    lilies = "百合花对团子有毒"  # no word of the constraint pattern
    assert settle(lilies, fact, DAY, [], safety=0.9).cls is MemoryClass.SAFETY
    assert settle(lilies, said_safety, DAY, [], safety=0.4).cls is MemoryClass.SAFETY
    assert settle(lilies, fact, DAY, [], safety=0.4).cls is MemoryClass.FACT
    assert settle(lilies, said_safety, DAY, [], safety=0.1).cls is MemoryClass.FACT
    assert settle(lilies, said_safety, DAY, [], safety=None).cls is MemoryClass.FACT


def test_the_learned_reading_never_overrules_a_liking() -> None:
    liking = Tags(MemoryClass.PREFERENCE, Decay.VOLUME, None, "老公")
    assert settle("老公最爱吃酸汤鱼", liking, DAY, [], safety=0.95).cls is MemoryClass.PREFERENCE
    fact = Tags(MemoryClass.FACT, Decay.VOLUME, None, "女儿")
    assert settle("女儿不爱吃葱花", fact, DAY, [], safety=0.95).cls is not MemoryClass.SAFETY


def test_the_class_heads_decide_a_liking_and_deny_a_happening() -> None:
    from memory.class_heads import ClassReading

    as_fact = Tags(MemoryClass.FACT, Decay.VOLUME, None, "我")
    liking = ClassReading(preference=0.92, event=0.05)
    assert settle("二舅就好整两口烧刀子", as_fact, DAY, [], reading=liking).cls is (
        MemoryClass.PREFERENCE
    )
    as_event = Tags(MemoryClass.EVENT, Decay.TIME, 1.0, "我")
    routine = ClassReading(preference=0.1, event=0.04)
    birthday = settle("小宝生日是十月初三", as_event, DAY, ["小宝"], reading=routine)
    assert birthday.cls is MemoryClass.FACT and birthday.expires_at is None
    plan = settle("下周三（12月2日）带小宝去拔牙", as_event, DAY, ["小宝"],
                  reading=ClassReading(preference=0.02, event=0.95))  # fmt: skip
    assert plan.cls is MemoryClass.EVENT and plan.expires_at is not None
    # a constraint is decided before the heads: a sure "liking" reading does not undo it
    rule = settle("小宝对芒果过敏", as_fact, DAY, ["小宝"], reading=liking)
    assert rule.cls is MemoryClass.SAFETY


def test_a_sure_liking_is_not_a_constraint_the_safety_head_only_suspects() -> None:
    from memory.class_heads import ClassReading

    said_safety = Tags(MemoryClass.SAFETY, Decay.VOLUME, None, "老公")
    liking = ClassReading(preference=0.9, event=0.05)
    mahjong = settle("老公爱打麻将，一打一下午", said_safety, DAY, [], 0.45, liking)
    assert mahjong.cls is MemoryClass.PREFERENCE
    sure = settle("老公吃了芒果嘴就肿", said_safety, DAY, [], 0.85, liking)
    assert sure.cls is MemoryClass.SAFETY  # the safety head sure on its own still decides
