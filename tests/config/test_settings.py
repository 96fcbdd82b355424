from __future__ import annotations

from pathlib import Path

import pytest

from config.secrets import secret_value
from config.settings import SettingsError, load_settings


def test_defaults_load_and_secrets_are_hidden() -> None:
    settings = load_settings(llm={"api_key": "sk-very-secret"})
    assert settings.server.ws_port == 8000
    assert settings.embedded_llm
    assert "sk-very-secret" not in repr(settings)


def test_env_overrides_with_prefix_and_nesting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_LLM__BASE_URL", "http://llm.local/v1")
    monkeypatch.setenv("HEARTH_LLM__MODEL", "qwen-max")
    monkeypatch.setenv("HEARTH_LLM__API_KEY", "k")
    monkeypatch.setenv("HEARTH_SERVER__WS_PORT", "9000")
    settings = load_settings()
    assert settings.llm.base_url == "http://llm.local/v1" and settings.llm.model == "qwen-max"
    assert settings.llm.api_key.get_secret_value() == "k"
    assert settings.server.ws_port == 9000
    assert not settings.embedded_llm


def test_unknown_env_setting_fails_naming_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_LLM__BASEURL", "x")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert info.value.key == "HEARTH_LLM__BASEURL"


def test_invalid_value_fails_naming_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_SERVER__WS_PORT", "eighty")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert info.value.key == "server.ws_port"


def test_user_file_overrides_defaults_and_unknown_keys_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "hearth.yaml"
    user.write_text("tts:\n  espeak_speed: 200\n")
    monkeypatch.setenv("HEARTH_CONFIG", str(user))
    assert load_settings().tts.espeak_speed == 200
    user.write_text("tts:\n  espeak_sped: 200\n")
    with pytest.raises(SettingsError) as info:
        load_settings()
    assert "espeak_sped" in info.value.key


def test_env_beats_user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = tmp_path / "hearth.yaml"
    user.write_text("server:\n  ws_port: 7000\n")
    monkeypatch.setenv("HEARTH_CONFIG", str(user))
    monkeypatch.setenv("HEARTH_SERVER__WS_PORT", "7100")
    assert load_settings().server.ws_port == 7100


def test_generated_secret_is_stable_and_private(tmp_path: Path) -> None:
    first = secret_value(None, tmp_path, "auth_key")
    assert secret_value(None, tmp_path, "auth_key") == first
    assert (tmp_path / "secrets" / "auth_key").stat().st_mode & 0o777 == 0o600
    assert len(first) >= 32
