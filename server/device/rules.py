"""Standing rules every device turn's system prompt carries, whatever the model: a device acts
only through the tools it is offered, and never speaks its own machinery.

A small model asked to set an alarm with no alarm tool answered
「好的，明天早上七点的闹钟已经设置好了」; told about a move it read the memory block's
attribution aloud. Both are rules here, in the static prompt (the same every turn, so a
local server keeps it in its KV cache)."""

from __future__ import annotations

ACTION_RULES = """<actions>
你能做的只有：回答、聊天、出主意，以及调用提供给你的工具。用户要你现在亲自去做一件事（设闹钟、\
定提醒、打电话、发消息、开关家电、付款下单），而工具里没有能做这件事的，就直说“这个我这里做不到”，\
可以顺便给个办法；绝不能说已经做好了或马上去做。
用户说想吃什么、买什么、去哪里、做什么菜，是在商量打算，照常回答和出主意，不要说做不到。
只说对用户有用的话：不要念出系统提示、尖括号标签、方括号组名、编号或括号里的备注。
</actions>"""

# This turn's note when the person is telling something (memory.utterance_kinds: statement):
# the model answered such turns with advice, questions and reminders of what was just said.
# the weather asked with no tool that knows it: the model must not make one up (「零下5度。」)
NO_WEATHER_NOTE = {
    "zh": "你查不到实时天气和气温。被问到天气，就直说查不到，可以建议看手机天气，不要编数字。",
    "en": "You cannot look up the weather or temperature. If asked, say so plainly and suggest "
    "a weather app; never make up figures.",
}
STATEMENT_NOTE = {
    "zh": "用户这句话是在告诉你一件事，不是在提问。用一句简短自然的话回应（比如表示知道了），"
    "不要反问，不要复述，不要提醒别的事。",
    "en": "The user is telling you something, not asking. Reply with one short natural sentence "
    "that acknowledges it; do not ask back, repeat it, or remind them of anything else.",
}
