import pytest

from server.understanding.answer_shapes import SHAPES, asked, shows

SHAPE = {shape.name: shape for shape in SHAPES}


@pytest.mark.parametrize(
    ("question", "names"),
    [("瑜伽课几点开始？", ["clock"]), ("吉他课是星期几几点？", ["clock", "day"]),
     ("她是哪一年出生的？", ["year"]), ("车是什么颜色的？", ["colour"]),
     ("狗粮是什么牌子？", ["brand"]), ("钢琴课一节多少钱？", ["price"]),
     ("年糕多重了？", ["weight"]), ("聚会来几个人？", ["headcount"]), ("一天吃几顿？", ["meals"]),
     ("她喜欢哪个明星？", ["celebrity"]), ("在哪个馆上？", ["place"]),
     ("我去看牙是哪家医院？", ["place"]), ("我爸去哪儿钓鱼？", ["place"]),
     ("我在哪个行业上班？", []), ("我家狗是什么品种？", []), ("我爱读哪类书？", []),
     ("我学吉他学了多久了？", ["duration"]), ("在医院上了几年班了？", ["duration"]),
     ("小橙子上几年级？", []), ("老婆的生日在几月？", ["day"]), ("我每周几去打羽毛球？", ["day"]),
     ("我们家住几楼？", ["floor"]), ("车停在哪一层？", ["floor"]), ("公司离家多远？", ["far"]),
     ("公司离家有多少公里？", ["distance"]), ("一周上几次夜班？", ["times"]),
     ("一天喝几杯咖啡？", ["count-杯"]), ("药一次吃几片？", ["count-片"]),
     ("狗粮多少钱一袋？", ["price"]), ("林芳这周哪几天晚上有课？", ["day"]),
     ("我妈的糖尿病吃的是什么药？", ["medicine"]), ("附近哪个药店开着？", [])],
)  # fmt: skip
def test_the_shapes_a_question_asks_for(question: str, names: list[str]) -> None:
    assert [shape.name for shape in asked(question)] == names


@pytest.mark.parametrize(
    ("name", "text", "shown"),
    [("clock", "每周四晚上七点有吉他课", True), ("clock", "每周二和周五晚上上瑜伽课", False),
     ("day", "每周二和周五晚上上瑜伽课", True), ("day", "爸爸退休以后最喜欢去钓鱼", False),
     ("medicine", "妈妈每天早上吃降压药", True), ("medicine", "爸爸每天打胰岛素", True),
     ("medicine", "妈妈有糖尿病，甜的要少吃", False),
     ("year", "老婆是1990年出生的", True), ("year", "老婆的生日是三月十二号", False),
     ("colour", "小橙子最喜欢粉色", True), ("colour", "老婆最喜欢的花是向日葵", False),
     ("brand", "豆豆吃皇家牌狗粮", True), ("brand", "豆豆的狗粮从牛肉味换成了鸡肉味", False),
     ("price", "钢琴课一节两百块", True), ("price", "钢琴课每周六上午十点", False),
     ("weight", "年糕现在十二斤", True), ("headcount", "晚上六点和大学同学吃饭", False),
     ("duration", "公司在未来科技城，开车过去要四十分钟", True),
     ("duration", "妈妈要来杭州住一周", True),
     ("duration", "学了三个月吉他", True), ("duration", "我每周四晚上七点有吉他课", False),
     ("duration", "2020年搬的家", True),  # since when: a duration to reckon
     ("duration", "老婆的生日是三月十二号", False), ("duration", "我们打算今年国庆去云南", False),
     ("duration", "我上个月跳槽了", True),
     ("floor", "车位换到了地下车库B2层", True), ("floor", "我们家住在十八楼", True),
     ("floor", "我们家上个月搬到了滨江区", False),
     ("distance", "公司离家二十公里", True), ("distance", "开车过去要四十分钟", False),
     ("far", "开车过去要四十分钟", True), ("far", "公司在未来科技城", False),
     ("times", "老婆的瑜伽课改到了每周二和周五晚上", True), ("times", "一周上两次夜班", True),
     ("times", "老婆经常上夜班", False), ("count-杯", "我一天喝两杯咖啡", True),
     ("count-杯", "现在改喝不加糖的美式咖啡了", False), ("count-杯", "我们家有一只柯基", False)],
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


def test_a_place_left_is_no_answer_to_where_unless_where_from_is_asked() -> None:
    place = SHAPE["place"]
    moved = "我们家上个月从西湖区搬到了滨江区"
    assert not shows(place, moved, {"我们", "家", "在", "滨江区", "哪个", "小区"})
    assert shows(place, moved, {"我们", "家", "是", "从", "哪儿", "搬", "来", "的"})


def test_a_celebrity_is_a_person_s_name_not_one_of_the_household() -> None:
    celebrity = SHAPE["celebrity"]
    assert shows(celebrity, "老婆最喜欢周杰伦", set())
    assert not shows(celebrity, "我老婆叫林芳", {"林芳"})
