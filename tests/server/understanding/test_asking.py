"""What a question asks, by its words alone (server/understanding/asking.py): a recorded fact or
what is so — or advice, leave, a plan or an act."""

from __future__ import annotations

import pytest

from server.understanding.asking import asks_about_the_household_state, asks_for_a_fact


@pytest.mark.parametrize(
    "question",
    ["我儿子叫什么名字？", "豆豆今年几岁了？", "我姐姐住在哪？", "我车牌号是多少", "我老婆是哪里人",
     "小橙子的钢琴课是周几，老师姓什么？", "我上次去北京是什么时候？", "谁是小橙子的班主任",
     "我妈喜欢吃什么水果？", "打疫苗是上午还是下午？", "我爸今年多大岁数了？", "开车过去要多久？",
     "小橙子的恐龙玩具是什么颜色的？", "豆豆的狗粮一袋能吃几天？"],
)  # fmt: skip
def test_questions_for_a_recorded_fact(question: str) -> None:
    assert asks_for_a_fact(question)


@pytest.mark.parametrize(
    "question",
    ["我中午一个人吃点什么好？", "周末带孩子去哪玩", "给豆豆喂几颗葡萄", "把空调调到几度",
     "老婆生日快到了，送什么花好？", "我嗓子有点干，喝点什么好？", "推荐几本书给我老婆",
     "我妈能吃西柚吗", "豆豆一天能吃几颗葡萄", "帮我查查明天几号", "晚饭做什么菜",
     "给小橙子挑个她喜欢的礼物"],
)  # fmt: skip
def test_advice_plans_and_requests_are_not_fact_questions(question: str) -> None:
    assert not asks_for_a_fact(question)


@pytest.mark.parametrize(
    ("question", "state"),
    [("老婆周一还练瑜伽吗？", True), ("这周六上午小橙子要干嘛？", True), ("车位还在B1吗？", True),
     ("小橙子周六几点上钢琴课？", True), ("这周四晚上七点我有空吗？", True),
     ("我能养猫吗", False), ("我可以养猫吗？", False), ("周六上午全家去郊游怎么样？", False),
     ("下周二晚上约同事八点去唱歌行吗？", False), ("我们去爬山好吗？", False),
     ("中秋给赵秀兰寄点什么？", False), ("帮我查查明天下雨吗", False)],
)  # fmt: skip
def test_a_question_for_what_is_so_is_told_from_advice_leave_and_requests(
    question: str, state: bool
) -> None:
    """What is so (a fact, whether it still holds, what is on) brings no constraint it does not
    ask about (``readpath``); asking leave or advice may be answered by one."""
    assert asks_about_the_household_state(question) is state
