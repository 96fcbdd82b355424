"""The kinship table (memory/kinship.json from relationship.js) and its lookups."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory import kinship

ROOT = Path(__file__).resolve().parents[2]
LIB_DIR = Path(os.environ.get("HEARTH_KINSHIP_LIB", "/tmp/kin"))


def test_synonyms_share_one_canonical() -> None:
    assert kinship.canonical("姥爷") == kinship.canonical("外公") == kinship.canonical("外祖父")
    mother = {kinship.canonical(t) for t in ("娘", "妈", "妈妈", "母亲", "老妈")}
    assert mother == {"妈妈"}
    wife = {kinship.canonical(t) for t in ("媳妇", "老婆", "妻子", "太太")}
    assert wife == {"老婆"}
    assert kinship.canonical("老公") == kinship.canonical("丈夫") != kinship.canonical("老婆")
    # 爱人/老伴 are the library's word for a spouse of either sex: one relation of their own
    assert kinship.canonical("爱人") == kinship.canonical("老伴") not in ("老婆", "老公")
    assert kinship.gender("爱人") is None and kinship.generation("老伴") == 0


def test_gender_and_generation() -> None:
    assert kinship.gender("媳妇") == "f"
    assert (kinship.gender("公公"), kinship.generation("公公")) == ("m", 1)
    assert (kinship.gender("婆婆"), kinship.generation("婆婆")) == ("f", 1)
    assert kinship.generation("孙女") == -2 and kinship.gender("孙女") == "f"
    assert kinship.generation("姥爷") == 2 and kinship.generation("闺女") == -1
    assert (kinship.gender("小姑子"), kinship.generation("小姑子")) == ("f", 0)
    assert kinship.gender("大舅") == "m" and kinship.generation("表哥") == 0
    assert kinship.gender("孩子") is None and kinship.generation("孩子") == -1
    assert kinship.generation("大爷") is None  # father's elder brother, or grandfather's


def test_derived_terms_carry_the_librarys_keys() -> None:
    uncle = kinship.entry("二舅")
    assert uncle is not None and uncle.chains == ("m,xb&2",) and uncle.generation == 1
    cousin = kinship.entry("表哥")
    assert cousin is not None and set(cousin.chains) == {"f,xs,s&o", "m,xb,s&o"}


def test_child_side() -> None:
    father_in_law = kinship.entry("公公")
    assert father_in_law is not None and father_in_law.child_calls == {"f": ("爷爷",)}
    mother = kinship.entry("妈")
    assert mother is not None and mother.child_calls == {"m": ("奶奶",), "f": ("外婆",)}


def test_unknown_words() -> None:
    for word in ("桌子", "", "孩子他爸"):
        assert not kinship.is_kin(word)
        assert kinship.canonical(word) is None
        assert kinship.gender(word) is None and kinship.generation(word) is None


def test_terms_and_single_characters() -> None:
    every = kinship.terms()
    assert {"外公", "姥爷", "老伴", "媳妇", "小姑子", "表哥", "闺女", "娘"} <= every
    assert 500 < len(every) < 2500 and all(1 <= len(t) <= 4 for t in every)
    for term in ("娘", "爸", "妈", "哥", "姐"):
        found = kinship.entry(term)
        assert found is not None and found.single_char
    assert not any(found.single_char for t in ("妈妈", "外公") if (found := kinship.entry(t)))


def test_longest_at() -> None:
    text = "我姥爷和二舅去看我表哥"
    assert kinship.longest_at(text, 1) == "姥爷"
    assert kinship.longest_at(text, 4) == "二舅"
    assert kinship.longest_at(text, 5) == "舅"
    assert kinship.longest_at(text, 9) == "表哥"
    assert kinship.longest_at(text, 3) is None  # 和
    assert kinship.longest_at(text, 99) is None and kinship.longest_at(text, -1) is None
    assert kinship.longest_at("我妈说", 1) == "妈"
    assert kinship.longest_at("我妈说", 1, single_char=False) is None


def test_source_header_records_the_library() -> None:
    source = kinship.source()
    assert (source["name"], source["version"], source["license"]) == (
        "relationship.js",
        "1.2.9",
        "MIT",
    )
    assert "Permission is hereby granted" in source["license_text"]
    generator = (ROOT / "scripts" / "kinship_table.py").read_text()
    assert f'VERSION = "{source["version"]}"' in generator


@pytest.mark.timeout(600)
def test_generator_reproduces_the_table(tmp_path: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the generator reads relationship.js with node")
    if not (LIB_DIR / "node_modules" / "relationship.js").is_dir():
        pytest.skip(f"relationship.js is not installed in {LIB_DIR} (HEARTH_KINSHIP_LIB)")
    out = tmp_path / "kinship.json"
    subprocess.run(
        [sys.executable, "scripts/kinship_table.py", "--lib-dir", str(LIB_DIR), "--out", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    assert out.read_text() == (ROOT / "memory" / "kinship.json").read_text()
    assert json.loads(out.read_text())["source"]["version"] == "1.2.9"


def test_a_relative_seen_from_the_childs_side_is_the_speakers_either_way() -> None:
    """孩子奶奶 is a father's mother and a mother's mother-in-law; 孩子姥爷 the reverse side."""
    grandma = kinship.from_childs_side("奶奶")
    assert {"妈妈", "婆婆"} <= set(grandma) and "岳母" not in grandma
    grandpa = kinship.from_childs_side("姥爷")
    assert {"岳父", "爸爸"} <= set(grandpa) and "公公" not in grandpa
    # a dialect word with both grandmothers' readings keeps both
    assert {"婆婆", "岳母", "妈妈"} <= set(kinship.from_childs_side("阿嬷"))


def test_the_childs_parents_and_unknown_words_have_no_other_side() -> None:
    assert kinship.from_childs_side("爸爸") == ()  # the speaker, or their spouse
    assert kinship.from_childs_side("孩子") == ()
    assert kinship.from_childs_side("桌子") == ()


def test_a_relatives_relative_is_named_from_the_speaker() -> None:
    assert kinship.of("老婆", "妈妈") == "岳母"
    assert kinship.of("儿子", "女儿") == "孙女"
    assert kinship.of("小明", "妈妈") is None
