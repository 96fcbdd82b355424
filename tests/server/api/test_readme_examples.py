"""The memory-API examples of the README and of the API guide (docs/api/index.md) run as written
(``curl -d``, no content type) against a live API on loopback — so they cannot rot. The key
comes from the API-key registry, as ``hearth api-key create`` prints it; only host and port are
changed."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory.registry import ApiKeys, Stores
from tests.server.api.conftest import Api

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
GUIDE = ROOT / "docs" / "api" / "index.md"


def api_section(page: Path) -> str:
    return page.read_text().split("Memory HTTP API", 1)[1]


def api_examples(page: Path) -> list[str]:
    """The curl commands of the first shell block after the page's "Memory HTTP API" heading."""
    block = re.search(r"```sh\n(.*?)```", api_section(page), flags=re.DOTALL)
    assert block is not None
    lines = block.group(1).replace("\\\n", " ").splitlines()
    return [line.split("  #")[0].strip() for line in lines if line.strip().startswith("curl")]


@pytest.mark.parametrize("page", [README, GUIDE], ids=["README", "docs-api"])
async def test_the_api_examples_run_as_written(api: Api, page: Path) -> None:
    examples = api_examples(page)
    assert len(examples) >= 3
    await Stores(api.redis).create("zhang", "zhang")
    key, _ = await ApiKeys(api.redis).create("readme", ["*"])
    port = api.base_url.rsplit(":", 1)[1]
    answers = []
    for command in examples:
        command = command.replace("localhost:8003", f"127.0.0.1:{port}")
        done = await asyncio.to_thread(
            subprocess.run, ["bash", "-c", command], capture_output=True, text=True,
            env={"KEY": key, "PATH": "/usr/bin:/bin"}, timeout=30, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stderr)
        answers.append(done.stdout)
    registered, stored, found = answers[:3]
    assert '"error"' not in registered and "老张" in registered
    assert '"stored' in stored
    assert "海鲜" in found and '"speaker":"老张"' in found.replace(" ", "")


def python_example() -> str:
    block = re.search(r"```python\n(.*?)```", api_section(GUIDE), flags=re.DOTALL)
    assert block is not None
    return block.group(1)


async def test_the_python_client_example_runs_as_written(api: Api) -> None:
    await Stores(api.redis).create("zhang", "zhang")
    key, _ = await ApiKeys(api.redis).create("readme-py", ["*"])
    done = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", python_example()], capture_output=True,
        text=True, env={"BASE": api.base_url, "KEY": key}, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "我老婆对海鲜过敏" and "我老婆对海鲜过敏" in lines[1:-1]
    assert lines[-1] == "400 陌生人"
