"""The reply checks of one turn, without sockets: what is said for each sentence the model
writes, and what the turn must still say when the model is done."""

from __future__ import annotations

from memory.schema import Memory, MemoryClass, PersonId
from server.device.reply_checks import ReplyChecks
from server.memory.read_result import ReadResult, Recalled
from server.understanding.grounding import Grounds

CANNOT = "这个我这里做不到。"
DONT_KNOW = "这个你还没跟我说过，我不知道。"


def _checks(tools: list[str] | None = None) -> ReplyChecks:
    ran = tools if tools is not None else []
    return ReplyChecks("zh", [], lambda: ran)


def test_an_act_no_tool_does_gets_the_honest_sentence_first() -> None:
    checks = _checks()
    assert checks.declined("下午三点提醒我去开会", [], None) is not None
    assert checks.check("好的，") == []  # a lone acknowledgement sounds like a yes
    assert checks.check("提醒一下，下午三点要去开会。") == [CANNOT, "提醒一下，下午三点要去开会。"]
    assert checks.check("到时候提醒你。") == []  # a claim after it is dropped, not said again
    assert checks.closing() is None
    assert [r["why"] for r in checks.replaced] == ["claimed action"]


def test_a_safety_reminder_may_come_first_and_the_cannot_last() -> None:
    checks = _checks()
    question, zhang = "每天晚上九点提醒我妈吃药", PersonId("zhang")
    diabetes = Memory("妈妈有糖尿病", zhang, MemoryClass.SAFETY)
    read = ReadResult(question, zhang, safety=(Recalled(diabetes, 0.6, "lookup", "safety"),))
    assert checks.declined(question, [], read) is not None
    assert checks.check("提醒一下，妈妈有糖尿病，甜的要少吃。") == [
        "提醒一下，妈妈有糖尿病，甜的要少吃。"
    ]
    assert checks.closing() == CANNOT


def test_no_decline_for_a_plan_or_when_a_tool_acted() -> None:
    plan = _checks()
    assert plan.declined("给爷爷买箱酸奶", [], None) is None
    assert plan.check("提醒一下，爷爷对牛奶过敏。") == ["提醒一下，爷爷对牛奶过敏。"]
    acted = _checks(["self_gadget_run"])
    assert acted.declined("帮我把窗帘拉上", [], None) is not None
    assert acted.check("好的，窗帘已经拉上了。") == ["好的，窗帘已经拉上了。"]
    assert acted.closing() is None


def test_when_memory_lacks_the_answer_nothing_comes_before_i_dont_know() -> None:
    checks = _checks()
    checks.grounds = Grounds(
        "小橙子的班主任姓什么？", ("- 小橙子今年五岁", "- 小橙子的钢琴老师姓王"), lacking=True
    )
    assert checks.check("小橙子的班主任姓王。") == []  # the question's words and another line's
    assert checks.check("你还没跟我说过。") == ["你还没跟我说过。"]
    assert checks.check("可以告诉我，我记下来。") == ["可以告诉我，我记下来。"]
    assert checks.closing() is None
    silent = _checks()
    silent.grounds = Grounds("豆豆是公的还是母的？", (), lacking=True)
    assert silent.check("豆豆是公的还是母的？") == []  # an echo is no answer either
    assert silent.closing() == DONT_KNOW


def test_a_line_of_memory_told_back_is_said_before_i_dont_know() -> None:
    """Labelled by hand on bench runs: a sentence telling one memory line back is true, context
    before "I don't know" — not an invented answer."""
    checks = _checks()
    checks.grounds = Grounds(
        "翠翠几岁了？", ("- 翠翠是一只画眉", "- 小橙子的钢琴老师姓王"), lacking=True
    )
    assert checks.check("翠翠是只画眉。") == ["翠翠是只画眉。"]
    assert checks.check("翠翠今年三岁。") == []  # 三岁: no line holds it
    # honest; cut at a comma after the first audio, it waits for what follows, and nothing
    # did: it is closed with a full stop
    assert checks.check("这个我这里做不到，") == []
    assert checks.closing() == "这个我这里做不到。" + DONT_KNOW


def test_after_hearths_reminder_the_models_own_is_not_said_again() -> None:
    """Hearth said the constraint first in memory's words; the model's reminder (garbled, here:
    gout said as an allergy) is dropped whole, however the splitter cut it, and what follows is
    spoken."""
    checks = _checks()
    checks.reminded = True
    assert checks.check("提醒一下，") == []
    assert checks.check("爸爸对啤酒过敏。") == []
    assert checks.check("可以买点无醇饮料。") == ["可以买点无醇饮料。"]
    assert checks.check("温馨提示：少喝点。") == []
    assert checks.repeats == 3 and {r["why"] for r in checks.replaced} == {"reminder repeated"}


def test_without_hearths_reminder_the_models_is_spoken() -> None:
    checks = _checks()
    assert checks.check("提醒一下，爸爸有痛风。") == ["提醒一下，爸爸有痛风。"]


def test_on_a_request_an_allergy_memory_does_not_hold_is_not_said() -> None:
    """Not only fact questions: the local model told a gift of lychees 「妈妈对荔枝过敏」 with
    her diabetes in the block. With memory not read (off), nothing is judged."""
    checks = _checks()
    checks.held = ("过年给我爷爷买一箱荔枝", "妈妈有糖尿病，甜的要少吃")
    checks.held_constraints = ("妈妈有糖尿病，甜的要少吃",)
    assert checks.check("爷爷对荔枝过敏，不能吃。") == []  # memory holds nothing of him
    assert checks.check("荔枝很甜，少吃一点。") == ["荔枝很甜，少吃一点。"]
    assert [r["why"] for r in checks.replaced] == ["an allergy memory does not hold: ['荔枝']"]
    assert checks.closing() is None
    nothing = _checks()
    assert nothing.check("妈妈对荔枝过敏。") == ["妈妈对荔枝过敏。"]


def test_with_nothing_injected_an_allergy_claimed_of_a_member_is_invented() -> None:
    """Memory was read and held nothing for the request: the local model's 「老爷子对腰椎MR过敏」
    is not said; an allergy the person told earlier in the session is."""
    checks = _checks()
    question = "大夫给老爷子开了个腰椎MR，你帮我看看约哪天合适"
    checks.take(ReadResult(question, PersonId("zhang")))
    assert checks.check("老爷子对腰椎MR过敏。") == []
    told = _checks()
    told.take(ReadResult(question, PersonId("zhang")), said=("老爷子对碘造影剂过敏",))
    assert told.check("老爷子对碘造影剂过敏，做检查要说一声。") == [
        "老爷子对碘造影剂过敏，做检查要说一声。"
    ]


def test_instead_of_a_claim_memory_does_not_hold_what_it_says_of_them() -> None:
    """Of someone memory holds constraints of: those, in memory's words, once."""
    checks = _checks()
    checks.held = (
        "过年给我妈买一箱荔枝",
        "妈妈有糖尿病，甜的要少吃",
        "妈妈每天早上吃降压药，不能和西柚一起吃",
        "我对青霉素过敏",
    )
    checks.held_constraints = checks.held[1:]
    said = "提醒一下：妈妈有糖尿病，甜的要少吃；妈妈每天早上吃降压药，不能和西柚一起吃。"
    assert checks.check("妈妈对荔枝过敏，不能吃。") == [said]
    assert checks.check("提醒一下，") == []
    assert checks.check("妈妈对芒果过敏。") == []  # said already: dropped only
    assert checks.closing() is None
    opened = _checks()
    opened.held, opened.held_constraints = checks.held, checks.held_constraints
    assert opened.check("提醒一下，") == []
    assert opened.check("妈妈对荔枝过敏。") == ["提醒一下，", said.removeprefix("提醒一下：")]


def test_a_reminder_opener_is_said_with_what_it_reminds_of_or_not_at_all() -> None:
    """The splitter cuts 「提醒一下，」 first; said alone before a dropped claim it would dangle."""
    checks = _checks()
    checks.held = ("过年给我妈买一箱荔枝", "妈妈有糖尿病，甜的要少吃")
    checks.held_constraints = ("妈妈有糖尿病，甜的要少吃",)
    assert checks.check("提醒一下，") == []
    assert checks.check("爷爷对荔枝过敏。") == []  # dropped, and its opener with it
    assert checks.check("提醒一下，") == []
    assert checks.check("妈妈有糖尿病，甜的要少吃。") == [
        "提醒一下，",
        "妈妈有糖尿病，甜的要少吃。",
    ]
    assert checks.closing() is None
    plain = _checks()  # no memory injected: held all the same (it dangled after an echo)
    plain.question = "明早六点半叫我起床"
    assert plain.check("明早六点半叫我起床。") == []
    assert plain.check("提醒一下，") == []
    assert plain.check("明早六点半叫我起床。") == []
    assert plain.closing() is None
    assert plain.check("提醒一下，") == []
    assert plain.check("明天降温，多穿点。") == ["提醒一下，", "明天降温，多穿点。"]


def test_after_hearths_reminder_a_bare_acknowledgement_waits_for_what_follows() -> None:
    """Said alone before a dropped echo it dangled: 「提醒一下：…。好的，」."""
    checks = _checks()
    checks.question = "年糕想吃普通的猫粮"
    checks.reminded = True
    assert checks.check("好的，") == []
    assert checks.check("年糕想吃普通的猫粮。") == []
    assert checks.closing() is None
    assert checks.check("好的，") == []
    assert checks.check("那就还是给它吃处方猫粮吧。") == ["好的，", "那就还是给它吃处方猫粮吧。"]
    first = _checks()  # as the reply's first words it goes out at once (the first audio)
    assert first.check("好的，") == ["好的，"]


def test_a_reply_giving_the_question_back_is_not_spoken() -> None:
    plain = _checks()
    plain.question = "现在几点了？"
    assert plain.check("现在是几点了？") == []
    assert plain.closing() is None  # nothing said: the turn's empty-reply apology follows
    assert [r["why"] for r in plain.replaced] == ["gives the question back"]
    request = _checks()
    request.question = "给老婆发条微信说我晚点回家"
    assert request.declined(request.question, [], None) is not None
    assert request.check("给老婆发条微信说我晚点回家。") == []
    assert request.closing() == CANNOT
    answer = _checks()
    answer.question = "车位还在B1吗？"
    assert answer.check("车位还在B1。") == ["车位还在B1。"]


def test_a_reminder_of_what_the_person_just_said_is_not_spoken() -> None:
    checks = _checks()
    checks.question = "明天下午我要带女儿去公园放风筝"
    assert checks.check("提醒一下，明天下午你要带女儿去公园放风筝。") == []
    assert checks.check("提醒一下，明天风大，记得给女儿多穿点。") == [
        "提醒一下，明天风大，记得给女儿多穿点。"
    ]
    assert [r["why"] for r in checks.replaced] == ["reminds the person of what they just said"]


def test_a_statement_that_came_to_nothing_is_acknowledged() -> None:
    checks = _checks()
    checks.kind = "statement"
    assert checks.check("好的，") == ["好的，"]
    assert checks.closing() == "我知道了。"
    other = _checks()
    other.kind = "request"
    other.question = "孩子阿嬷关节痛，让她吃哪个好？"
    assert other.fallback().startswith("嗯，这个我一时不知道怎么回答")


def test_a_request_asking_nothing_that_came_to_nothing_is_acknowledged() -> None:
    """A plan or a request that asks no question is not met with 「换个说法再问我一次」."""
    checks = _checks()
    checks.kind = "request"
    checks.question = "超市低钠盐打折，多囤几袋回来炒菜用"
    assert checks.fallback() == "好的，我知道了。"
    checks.question = "Could you suggest something sweet for my wife?"
    assert checks.fallback().startswith("嗯")


def test_a_sentence_recommending_what_a_said_constraint_forbids_is_not_spoken() -> None:
    from server.device.heeding import heeded

    checks = _checks()
    checks.reminded = True
    checks.heeded = heeded(["朵朵对鸡蛋过敏"], ["朵朵"])
    assert checks.check("可以给朵朵做个鸡蛋羹。") == []
    assert checks.check("所以要多放点葱花。") == []  # leans on the sentence not spoken
    assert checks.check("小米南瓜粥也很合适。") == ["小米南瓜粥也很合适。"]


def test_a_memory_lines_prompt_note_is_never_read_aloud() -> None:
    checks = _checks()
    assert checks.check("备用钥匙在对门龙老师家（关于我）。") == ["备用钥匙在对门龙老师家。"]
    assert checks.replaced[0]["why"] == "a memory line's note from the prompt"


def test_device_controls_without_a_tool_are_declined_with_one_the_model_acts() -> None:
    from server.device.claims import requested_act, tool_could_do

    act = requested_act("把声音调大一点")
    assert act is not None
    volume = {"function": {"name": "self.audio_speaker.set_volume", "description": "Set volume"}}
    assert tool_could_do(act, [volume])
    assert not tool_could_do(act, [])
    checks = _checks()
    assert checks.declined("把声音调大一点", [], None) is not None
    assert checks.check("好的，音量调大了。") == [CANNOT]


def test_a_sentence_against_an_unsaid_constraint_is_replaced_by_that_constraint() -> None:
    from server.device.heeding import heeded

    checks = _checks()
    checks.guarded = heeded(["Daniel对坚果过敏，腰果、杏仁都不能吃"], ["Daniel"])
    assert checks.check("腰果多放点吧。") == ["提醒一下：Daniel对坚果过敏，腰果、杏仁都不能吃。"]
    assert checks.check("杏仁也可以来一点。") == []  # said once; the next is dropped
    assert checks.check("再配点水果。") == ["再配点水果。"]


def test_after_hearths_reminder_a_bare_understood_is_held_not_left_dangling() -> None:
    """「提醒一下：舟舟左耳鼓膜穿孔了…。明白了，」 with the sentence after it dropped as unsafe:
    the bare 「明白了，」 is held, so the turn does not end on a fragment."""
    checks = _checks()
    checks.reminded = True
    assert checks.check("明白了，") == []
    assert checks.closing() is None  # the unsafe sentence after it was dropped: nothing dangles
    assert checks.check("出发前记得带上耳塞。") == ["明白了，", "出发前记得带上耳塞。"]


def test_a_question_about_memory_that_came_to_nothing_is_not_known() -> None:
    checks = _checks()
    checks.kind = "memory_question"
    checks.question = "糯米晚上睡得踏实吗"
    assert checks.fallback() == DONT_KNOW


def test_a_reminder_on_a_command_is_not_spoken() -> None:
    checks = _checks()
    checks.kind = "command"
    checks.question = "声音再大点，老爷子耳朵背"
    assert checks.check("提醒一下，老人家听力不好要多体谅。") == []
    assert [r["why"] for r in checks.replaced] == ["a reminder on a command or chit-chat"]


def test_a_reminder_on_a_statement_with_no_constraint_is_not_spoken() -> None:
    checks = _checks()
    checks.kind = "statement"
    checks.question = "客厅灯调暗点，刺眼睛得很"
    assert checks.check("提醒一下，客厅灯调暗点可能会刺眼睛。") == []
    guarded = _checks()
    guarded.kind, guarded.held_constraints = "statement", ("米粒还不到一岁，不能吃蜂蜜",)
    guarded.question = "今晚给米粒冲一小碗蜂蜜水"
    assert guarded.check("提醒一下，米粒还不到一岁。") == ["提醒一下，米粒还不到一岁。"]


def test_a_clause_left_hanging_after_the_first_audio_is_closed_or_unsaid() -> None:
    """A clause cut at a comma or colon waits for what follows it; when that is dropped the
    turn never ends on it: closed with a full stop when it says something alone, not said when
    it only acknowledges or introduces what was dropped."""
    checks = _checks()
    assert checks.check("超市那种就行，") == ["超市那种就行，"]  # the first audio: at once
    assert checks.check("你可以去超市看看。") == ["你可以去超市看看。"]
    assert checks.check("好的，") == []  # held…
    assert checks.check("我记下了。") == ["好的，", "我记下了。"]  # …and said with what follows
    assert checks.check("清单如下：") == []
    assert checks.closing() is None  # the list was never spoken: its colon is not either
    assert {"said": "清单如下：", "why": "a clause whose continuation was not spoken"} in (
        checks.replaced
    )
    closed = _checks()
    assert closed.check("提醒一下：果果不能吃整颗坚果。") == ["提醒一下：果果不能吃整颗坚果。"]
    assert closed.check("这个我这里做不到，") == []
    assert closed.closing() == "这个我这里做不到。"
    ack = _checks()
    ack.check("提醒一下：你对乳胶过敏。")
    assert ack.check("好伐，") == []
    assert ack.closing() is None


def test_a_statement_told_back_is_acknowledged_instead() -> None:
    checks = _checks()
    checks.question, checks.kind = "外婆最近迷上抖音跳广场舞了，天天对着手机学。", "statement"
    assert checks.check("你最近迷上抖音跳广场舞了，每天对着手机学。") == []
    assert checks.closing() is None
    assert checks.fallback() == "好的，我知道了。"
    said = _checks()
    said.question, said.kind = "阿敏新报咗个粤剧兴趣班，逢星期四夜晚上堂。", "statement"
    assert said.check("阿敏新报咗个粤剧兴趣班，") == []
    assert said.check("听起来很有意思，祝她学得开心。") == ["听起来很有意思，祝她学得开心。"]


def test_a_reminder_split_from_its_opener_is_not_the_utterance_told_back() -> None:
    checks = _checks()
    checks.question, checks.kind = "声儿小点，孩子写作业呢。", "request"
    assert checks.check("提醒一下，") == []
    assert checks.check("孩子写作业。") == []


def test_after_hearths_reminder_a_hanging_clause_waits_too() -> None:
    checks = _checks()
    checks.reminded = True  # 「提醒一下：你对乳胶过敏…」 was said first, by Hearth
    assert checks.check("好伐，") == []
    assert checks.closing() is None
    honest = _checks()  # the first audio, but the honest clause: its continuation may go
    assert honest.check("这个我这里做不到，") == []
    assert honest.closing() == "这个我这里做不到。"


def test_a_statement_whose_reply_stops_at_a_comma_is_acknowledged() -> None:
    checks = _checks()
    checks.question, checks.kind = "同你讲声，朗仔围棋班改咗星期日下昼。", "statement"
    assert checks.check("好主意，") == ["好主意，"]  # the first audio goes at once
    assert checks.check("朗仔围棋班改为星期日下昼。") == []  # told back
    assert checks.closing() == "我知道了。"


def test_after_hearths_reminder_going_along_in_the_requests_words_is_not_said() -> None:
    """Hearth said 堂客's no-hot-springs rule first; the model's 「好的，我已经安排了…」 in the
    request's own words goes along with what it warns of. An alternative that refuses, and a
    sentence of its own, are said."""
    checks = _checks()
    checks.question, checks.kind = "元旦带堂客去灰汤住两晚,好好泡一泡放松下。", "statement"
    checks.reminded = True
    assert checks.check("好的，我已经安排了元旦带堂客去灰汤住两晚。") == []
    why = "goes along with what Hearth's reminder warns of"
    assert {"said": "好的，我已经安排了元旦带堂客去灰汤住两晚。", "why": why} in checks.replaced
    assert checks.check("元旦带堂客去长沙城里逛逛，不去泡温泉。") != []
    request = _checks()
    request.question, request.kind = "天儿冷了,给我妈买两串糖墩儿解解馋。", "request"
    request.reminded = True
    assert request.check("你可以去超市买两串糖墩儿解解馋。") == []
    assert request.check("可以买点无糖的山楂片。") == ["可以买点无糖的山楂片。"]
    unreminded = _checks()
    unreminded.question, unreminded.kind = request.question, "request"
    assert unreminded.check("你可以去超市买两串糖墩儿解解馋。") != []
