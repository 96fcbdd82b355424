import pytest

from server.device.answer_shapes import SHAPES, asked, shows

SHAPE = {shape.name: shape for shape in SHAPES}


@pytest.mark.parametrize(
    ("question", "names"),
    [("瑜伽课几点开始？", ["clock"]), ("吉他课是星期几几点？", ["clock", "day"]),
     ("她是哪一年出生的？", ["year"]), ("车是什么颜色的？", ["colour"]),
     ("狗粮是什么牌子？", ["brand"]), ("钢琴课一节多少钱？", ["price"]),
     ("年糕多重了？", ["weight"]), ("聚会来几个人？", ["headcount"]), ("一天吃几顿？", ["meals"]),
     ("她喜欢哪个明星？", ["celebrity"]), ("在哪个馆上？", ["place"]),
     ("我去看牙是哪家医院？", ["place"]), ("我爸去哪儿钓鱼？", ["place"]),
     ("我在哪个行业上班？", []), ("我家狗是什么品种？", []), ("我爱读哪类书？", [])],
)  # fmt: skip
def test_the_shapes_a_question_asks_for(question: str, names: list[str]) -> None:
    assert [shape.name for shape in asked(question)] == names


@pytest.mark.parametrize(
    ("name", "text", "shown"),
    [("clock", "每周四晚上七点有吉他课", True), ("clock", "每周二和周五晚上上瑜伽课", False),
     ("day", "每周二和周五晚上上瑜伽课", True), ("day", "爸爸退休以后最喜欢去钓鱼", False),
     ("year", "老婆是1990年出生的", True), ("year", "老婆的生日是三月十二号", False),
     ("colour", "小橙子最喜欢粉色", True), ("colour", "老婆最喜欢的花是向日葵", False),
     ("brand", "豆豆吃皇家牌狗粮", True), ("brand", "豆豆的狗粮从牛肉味换成了鸡肉味", False),
     ("price", "钢琴课一节两百块", True), ("price", "钢琴课每周六上午十点", False),
     ("weight", "年糕现在十二斤", True), ("headcount", "晚上六点和大学同学吃饭", False)],
)  # fmt: skip
def test_a_text_shows_a_value_of_a_shape_by_its_form(name: str, text: str, shown: bool) -> None:
    assert shows(SHAPE[name], text, set()) is shown


def test_a_place_other_than_the_question_s_own_words() -> None:
    place = SHAPE["place"]
    assert shows(place, "12月6日晚上六点和大学同学在外婆家吃饭", set())
    assert shows(place, "公司在未来科技城，开车过去要四十分钟", set())  # 科技 + 城
    assert not shows(place, "12月4日下午三点去医院看牙", {"我", "去", "看", "牙", "哪家", "医院"})
    assert not shows(place, "豆豆的狗粮从牛肉味换成了鸡肉味", set())  # 从: no place
    assert not shows(place, "爸爸退休以后最喜欢去钓鱼", {"钓鱼"})


def test_a_celebrity_is_a_person_s_name_not_one_of_the_household() -> None:
    celebrity = SHAPE["celebrity"]
    assert shows(celebrity, "老婆最喜欢周杰伦", set())
    assert not shows(celebrity, "我老婆叫林芳", {"林芳"})
