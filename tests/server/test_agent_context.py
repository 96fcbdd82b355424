"""``hearth-agent-context``: a prompt hook's view of the running server's read path."""

from __future__ import annotations

import asyncio
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from config.run_files import publish_agent_pointer, read_agent_pointer
from config.settings import load_settings
from memory.importer import import_file
from memory.schema import PersonId
from memory.store import EdgeMemoryStore
from providers.embedder import UseEmbedder
from server.agent_context import prompt_from
from server.auth import TokenAuthority
from server.devices import DeviceRegistry
from server.http_app import HttpServices, build_http_app
from server.memory.engine import MemoryEngine
from server.memory.readpath import ReadPath
from tests.memory.conftest import FIXTURES
from tests.support.serving import serving

HOOK = Path(sys.executable).with_name("hearth-agent-context")


def run_hook(data_dir: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {"HEARTH_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(HOOK), *args], input=stdin.encode(), capture_output=True,
                          env=env, timeout=30, check=False)  # fmt: skip


def publish_admin(data_dir: Path, url: str, token: str) -> None:
    """What a running server leaves in its data folder for operator commands."""
    (data_dir / "run").mkdir()
    (data_dir / "run" / "admin.url").write_text(url)
    (data_dir / "secrets").mkdir(exist_ok=True)
    (data_dir / "secrets" / "admin_token").write_text(token)


def test_hook_input_may_be_text_or_the_hooks_json() -> None:
    assert prompt_from("订个海鲜礼包送我老婆\n") == "订个海鲜礼包送我老婆"
    assert prompt_from('{"session_id": "x", "prompt": "订个海鲜礼包"}') == "订个海鲜礼包"
    assert prompt_from("{not json") == "{not json"


async def test_no_server_means_no_block_and_no_failure(tmp_path: Path) -> None:
    done = await asyncio.to_thread(run_hook, tmp_path, "订个海鲜礼包送我老婆", "--person", "zhang")
    assert done.returncode == 0 and done.stdout == b""
    assert b"no memory injected" in done.stderr


async def test_prints_the_read_path_block_of_the_person(
    tmp_path: Path, redis: Redis, embedder: UseEmbedder
) -> None:
    store = EdgeMemoryStore(tmp_path / "memory", embedder.dim)
    import_file(FIXTURES / "household_zhang.jsonl", PersonId("zhang"), embedder, store)
    engine = MemoryEngine(embedder, store, ReadPath(embedder, store, load_settings().memory))
    settings = load_settings(data_dir=tmp_path)
    services = HttpServices(settings, TokenAuthority(b"k" * 32, 60), DeviceRegistry(redis),
                            "metrics", admin_token="admin-token", memory=engine)  # fmt: skip
    try:
        async with serving(build_http_app(services)) as url:
            publish_admin(tmp_path, url, "admin-token")
            hook = "订个海鲜礼包送我老婆"
            hit = await asyncio.to_thread(run_hook, tmp_path, f'{{"prompt": "{hook}"}}',
                                          "--person", "zhang")  # fmt: skip
            noise = await asyncio.to_thread(
                run_hook, tmp_path, "放首周杰伦的歌", "--person", "zhang"
            )
            other = await asyncio.to_thread(run_hook, tmp_path, hook, "--person", "li")
    finally:
        store.close()
    assert hit.returncode == 0
    assert "[安全约束]" in hit.stdout.decode() and "海鲜过敏" in hit.stdout.decode()
    assert noise.returncode == 0 and noise.stdout == b""
    assert other.returncode == 0 and "海鲜" not in other.stdout.decode()


async def test_a_cloned_repository_cannot_redirect_the_hook(tmp_path: Path) -> None:
    """Issue 20: the hook used to read ./hearth.yaml and ./data in the agent's working directory,
    which a cloned repository controls — the prompt went wherever it pointed."""
    contacted: list[bool] = []

    async def attacker(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        contacted.append(True)
        writer.close()

    server = await asyncio.start_server(attacker, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    repo = tmp_path / "cloned-repo"
    (repo / "data" / "run").mkdir(parents=True)
    (repo / "data" / "secrets").mkdir()
    (repo / "data" / "run" / "admin.url").write_text(f"http://127.0.0.1:{port}")
    (repo / "data" / "secrets" / "admin_token").write_text("x" * 32)
    (repo / "hearth.yaml").write_text(f"data_dir: {repo / 'data'}\nmcp:\n  agent_person: zhang\n")
    env = {"PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp_path / "user-config")}
    try:
        done = await asyncio.to_thread(
            subprocess.run, [str(HOOK)], input="我的密码是 hunter2".encode(), capture_output=True,
            env=env, cwd=repo, timeout=30, check=False,
        )  # fmt: skip
    finally:
        server.close()
    assert done.returncode == 0 and done.stdout == b""
    assert b"no running Hearth published for this user" in done.stderr
    assert contacted == []


def test_a_running_hearth_publishes_the_pointer_the_hook_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    path = publish_agent_pointer(tmp_path / "data", "zhang")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_agent_pointer() == {"data_dir": str((tmp_path / "data").resolve()),
                                    "agent_person": "zhang"}  # fmt: skip
