"""The present moment told to the model, in the device's language."""

from __future__ import annotations

import time

from server.device.clock import moment_note

# 2026-12-03 16:05 local time, a Thursday
NOW = time.mktime((2026, 12, 3, 16, 5, 0, 0, 0, -1))


def test_the_moment_in_chinese_and_english() -> None:
    assert moment_note("zh-CN", NOW).startswith("现在是2026年12月3日，星期四，16点05分。")
    assert moment_note("en", NOW).startswith("It is now 16:05 on Thursday, 2026-12-03.")
