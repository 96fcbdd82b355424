"""A reply that only gives the question back: the whole question, turned to the listener, a part
asked again, a request read back — and what is not one."""

from __future__ import annotations

import pytest

from server.device.echo import echoes


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("你是什么血型？", "我是什么血型？"),
        ("你最近什么时候要去医院？", "我最近什么时候要去医院？"),
        ("滨江区的房子多大面积？", "我们家滨江区的房子多大面积？"),
        ("现在是几点了？", "现在几点了？"),
        ("放首周杰伦的晴天。", "放首周杰伦的晴天"),
        ("给老婆发条微信说我晚点回家。", "给老婆发条微信说我晚点回家"),
        ("你是不是换工作了？", "我是不是换工作了？"),
        ("你同学聚会一共来了几个？", "同学聚会一共来几个人？"),
        # a question for a value given back as a statement, without its question word
        ("小橙子在幼儿园。", "小橙子在哪个幼儿园？"),
        ("你爸一般去钓鱼。", "我爸一般去哪儿钓鱼？"),
        ("你明天有安排。", "我明天有什么安排？"),
    ],
)
def test_an_echo_is_recognised(sentence: str, question: str) -> None:
    assert echoes(sentence, question)


@pytest.mark.parametrize(
    ("sentence", "question"),
    [
        ("车位还在B1。", "车位还在B1吗？"),  # the statement answers the yes/no question
        ("你老婆叫林芳。", "我老婆叫什么？"),
        ("你是说小橙子的生日吗？", "小橙子的生日是哪天？"),  # asks back with words of its own
        ("几点？", "老婆的瑜伽课几点开始？"),  # under half the question
        ("B几？", "车停在B几？"),  # too short to tell
        ("明天杭州瑰夏雨会下雨吗？", "明天杭州会下雨吗？"),
        ("What time is it?", "What time is it?"),  # only Chinese is read
        ("小橙子在阳光幼儿园。", "小橙子在哪个幼儿园？"),  # names the value
        ("豆豆三岁了。", "豆豆几岁了？"),
        ("你喜欢猫。", "我喜欢什么，猫还是狗？"),  # a value the question offers
        ("你换工作了。", "我是不是换工作了？"),  # a yes/no question restated answers it
        ("天空是蓝色的。", "为什么天空是蓝色的？"),  # the reason follows
        ("小橙子最喜欢恐龙，", "小橙子最喜欢哪种恐龙？"),  # a clause: the next may name it
    ],
)
def test_an_answer_or_a_question_of_its_own_is_no_echo(sentence: str, question: str) -> None:
    assert not echoes(sentence, question)
