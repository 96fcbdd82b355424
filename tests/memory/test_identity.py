"""The identity rules, one home for every entry point: person (store) ids, speaker names, me."""

from __future__ import annotations

import pytest

from memory.identity import ME, IdentityError, person_id, registrable, speaker_name


def test_person_ids_are_case_folded_and_checked() -> None:
    assert person_id("Zhang") == "zhang"
    assert person_id("li.family_2-b") == "li.family_2-b"
    for bad in ("", "-x", "a:b", "x" * 65, "张"):
        with pytest.raises(IdentityError) as raised:
            person_id(bad, "user_id")
        assert raised.value.fields == {"user_id": bad}
        assert raised.value.message.startswith("user_id must be 1-64 ASCII letters")


def test_speaker_names_follow_the_seed_rules() -> None:
    assert speaker_name("  Jose\u0301 ") == "Jos\u00e9"  # trimmed, NFC
    assert speaker_name(ME) == ME
    for bad, why in (("  ", "must not be empty"), ("x" * 81, "at most 80"), ("ME", "lower case")):
        with pytest.raises(IdentityError, match=why):
            speaker_name(bad)
    with pytest.raises(IdentityError, match="reserved"):
        registrable("me")
    assert registrable("老张") == "老张"
