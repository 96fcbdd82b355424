"""docker-compose.yml is validated without a Docker engine (Debian's docker-compose `config`)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from config.settings import check_environment

ROOT = Path(__file__).resolve().parent.parent
SECRETS = {
    "REDIS_PASSWORD": "r-pass",
    "QDRANT_API_KEY": "q-key",
    "HEARTH_AUTH_SECRET": "a-secret",
    "HEARTH_METRICS_TOKEN": "m-token",
    "HEARTH_LLM_BASE_URL": "https://llm.example/v1",
    "HEARTH_LLM_MODEL": "some-model",
}


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("docker-compose")
    assert binary, "docker-compose (Debian package) is installed by scripts/install.sh"
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS}
    return subprocess.run(
        [binary, "-f", str(ROOT / "docker-compose.yml"), "config"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    result = compose_config(SECRETS)
    assert result.returncode == 0, result.stderr
    parsed: dict[str, Any] = yaml.safe_load(result.stdout)
    return parsed


def test_services_and_shared_image(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"qdrant", "redis", "hearth-server", "hearth-worker"}
    assert services["hearth-server"]["image"] == services["hearth-worker"]["image"]
    assert services["hearth-server"]["command"] == ["hearth", "serve"]
    assert services["hearth-worker"]["command"] == ["hearth", "worker"]
    published = {p["target"] for p in services["hearth-server"]["ports"]}
    assert published == {8000, 8003, 8004, 8005, 8006}


def test_qdrant_has_api_key_volume_healthcheck_and_pinned_http_scheme(
    compose: dict[str, Any],
) -> None:
    qdrant = compose["services"]["qdrant"]
    assert qdrant["environment"]["QDRANT__SERVICE__API_KEY"] == "q-key"
    assert any(
        str(v).endswith(":/qdrant/storage:rw") or "/qdrant/storage" in str(v)
        for v in qdrant["volumes"]
    )
    assert qdrant["healthcheck"]["test"]
    env = compose["services"]["hearth-server"]["environment"]
    assert env["HEARTH_QDRANT__URL"].startswith("http://qdrant:")
    assert env["HEARTH_MEMORY__STORE"] == "qdrant"  # production memory lives in the Qdrant server
    assert env["HEARTH_QDRANT__API_KEY"] == "q-key"


def test_redis_has_password_aof_and_healthcheck(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert "--requirepass" in redis["command"] and "r-pass" in redis["command"]
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    assert redis["healthcheck"]["test"]
    env = compose["services"]["hearth-worker"]["environment"]
    assert env["HEARTH_REDIS__URL"] == "redis://:r-pass@redis:6379/0"


def test_every_hearth_variable_is_a_real_setting(compose: dict[str, Any]) -> None:
    for name in ("hearth-server", "hearth-worker"):
        env = compose["services"][name]["environment"]
        check_environment({k: str(v) for k, v in env.items()})  # raises on a typo


def test_missing_secret_is_refused() -> None:
    partial = {k: v for k, v in SECRETS.items() if k != "QDRANT_API_KEY"}
    result = compose_config(partial)
    assert result.returncode != 0 and "QDRANT_API_KEY" in result.stderr


def test_dockerfile_installs_the_project_and_runs_hearth() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir -c constraints.txt ." in text and "espeak-ng" in text
    assert "COPY memory ./memory" in text  # every top-level package goes into the image
    assert 'CMD ["hearth", "serve"]' in text
