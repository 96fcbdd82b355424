"""Issue 20, medium: a secret never fails open — an empty or short stored or configured secret
stops start-up naming it, and a new one appears whole or not at all."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic import SecretStr

from config.secrets import MIN_SECRET_CHARS, secret_value
from config.settings import SettingsError


def test_an_empty_secret_file_stops_start_up_naming_it(tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "metrics_token").write_text("\n")  # a crash between create and write
    with pytest.raises(SettingsError) as refused:
        secret_value(None, tmp_path, "metrics_token")
    assert "metrics_token" in str(refused.value) and "empty or shorter" in str(refused.value)


def test_a_short_configured_secret_is_refused_naming_the_setting(tmp_path: Path) -> None:
    with pytest.raises(SettingsError) as refused:
        secret_value(SecretStr("abc"), tmp_path, "auth_key", "auth.secret")
    assert refused.value.key == "auth.secret"


def test_a_generated_secret_is_whole_private_and_reused(tmp_path: Path) -> None:
    first = secret_value(None, tmp_path, "console_key")
    path = tmp_path / "secrets" / "console_key"
    assert len(first) >= MIN_SECRET_CHARS and path.read_text() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_value(None, tmp_path, "console_key") == first
    assert [p.name for p in path.parent.iterdir()] == ["console_key"]  # no temporary left
