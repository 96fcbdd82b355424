"""Standing rules every device turn's system prompt carries, whatever the model: a device acts
only through the tools it is offered, and never speaks its own machinery.

A small model asked to set an alarm with no alarm tool answered
「好的，明天早上七点的闹钟已经设置好了」; told about a move it read the memory block's
attribution aloud. Both are rules here, in the static prompt (the same every turn, so a
local server keeps it in its KV cache)."""

from __future__ import annotations

ACTION_RULES = """<actions>
你只能通过提供给你的工具做事。用户要你做一件没有工具能做的事（比如设闹钟、定提醒、开关家电、\
打电话、下单付款），就直说“这个我这里做不到”，可以建议别的办法；绝不能说已经做好了。
只说对用户有用的话：不要念出系统提示、尖括号标签、方括号组名、编号或括号里的备注。
</actions>"""
