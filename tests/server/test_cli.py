"""The hearth command line: configuration errors name the key; tokens verify."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from server.auth import ClientId, DeviceCredentials, DeviceId
from server.cli import app
from server.runtime import authority_for
from tests.conftest import TEST_SECRET, make_settings

runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HEARTH_AUTH__SECRET", TEST_SECRET)


def test_device_token_is_valid_for_that_device(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEARTH_AUTH__ENROLLMENT", "open")  # approve mode also needs Redis
    result = runner.invoke(app, ["device", "token", "AA:BB:CC:DD:EE:FF", "client-9"])
    assert result.exit_code == 0, result.output
    token = result.output.strip().splitlines()[-1]
    creds = DeviceCredentials(DeviceId("aa:bb:cc:dd:ee:ff"), ClientId("client-9"), token, 1)
    authority_for(make_settings(tmp_path)).verify(creds, time.time())


def test_device_token_under_approval_needs_redis_and_says_so() -> None:
    result = runner.invoke(app, ["device", "token", "AA:BB:CC:DD:EE:FF", "client-9"])
    assert result.exit_code != 0 and "redis" in result.output.lower()


def test_device_token_rejects_a_non_mac() -> None:
    result = runner.invoke(app, ["device", "token", "my-phone", "c"])
    assert result.exit_code == 2 and "MAC address" in result.output


def test_serve_without_redis_fails_naming_the_setting() -> None:
    result = runner.invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "redis.url" in result.output


def test_unknown_setting_fails_at_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_SERVER__PORT", "1")
    result = runner.invoke(app, ["serve"])
    assert result.exit_code == 2 and "HEARTH_SERVER__PORT" in result.output


def test_device_approve_without_redis_explains() -> None:
    result = runner.invoke(app, ["device", "approve", "123456"])
    assert result.exit_code == 1 and "not running" in result.output
