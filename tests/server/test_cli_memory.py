"""``hearth memory import|recall``: directly on the store, and through a running server."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from config.run_files import admin_url_file
from config.secrets import secret_value
from providers.embedder import UseEmbedder
from server.cli import app
from server.memory.engine import build_memory
from tests.conftest import TEST_SECRET, make_settings

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "household_zhang.jsonl"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HEARTH_AUTH__SECRET", TEST_SECRET)


def test_import_then_recall_json_directly_on_the_store() -> None:
    imported = runner.invoke(app, ["memory", "import", str(FIXTURE), "--person", "zhang"])
    assert imported.exit_code == 0, imported.output
    assert "imported 15" in imported.output
    again = runner.invoke(app, ["memory", "import", str(FIXTURE), "--person", "zhang"])
    assert again.exit_code == 0
    result = runner.invoke(
        app, ["memory", "recall", "订个海鲜礼包送我老婆", "--person", "zhang", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    safety = data["groups"]["safety"]
    wife = next(m for m in safety if m["text"].startswith("我老婆对海鲜过敏"))
    assert wife["promoted"] and wife["cls"] == "safety" and wife["score"] > 0
    assert "[安全约束]" in data["prompt_block"]
    assert set(data["timings_ms"]) >= {"embed", "round1", "round2", "render", "total"}
    # importing twice stored nothing twice
    settings = make_settings(Path(os.environ["HEARTH_DATA_DIR"]))
    engine = build_memory(settings, UseEmbedder())
    try:
        assert engine.store.count("zhang") == 15  # type: ignore[arg-type]
    finally:
        engine.close()


def test_bad_jsonl_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "好"}\n{"txt": "typo"}\n')
    result = runner.invoke(app, ["memory", "import", str(bad), "--person", "p"])
    assert result.exit_code == 1 and "line 2" in result.output


async def test_recall_goes_through_the_running_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio
    import contextlib

    import uvicorn

    from providers.processes import free_port
    from server.devices import DeviceRegistry
    from server.http_app import HttpServices, build_http_app
    from server.runtime import authority_for
    from tests.support.waiting import wait_until

    settings = make_settings(tmp_path)
    engine = build_memory(settings)  # this process now holds the shard: a second open fails
    port = free_port()
    services = HttpServices(
        settings, authority_for(settings), DeviceRegistry(None),  # type: ignore[arg-type]
        "m", admin_token=secret_value(None, tmp_path, "admin_token"), memory=engine,
    )  # fmt: skip
    server = uvicorn.Server(uvicorn.Config(build_http_app(services), host="127.0.0.1", port=port,
                                           log_level="warning", lifespan="off"))  # fmt: skip
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    task = asyncio.create_task(server.serve())
    await wait_until(lambda: server.started, within_s=10)
    admin_url_file(settings.data_dir).parent.mkdir(parents=True, exist_ok=True)
    admin_url_file(settings.data_dir).write_text(f"http://127.0.0.1:{port}")
    try:
        imported = await asyncio.to_thread(
            runner.invoke, app, ["memory", "import", str(FIXTURE), "-p", "zhang"]
        )
        assert imported.exit_code == 0, imported.output
        result = await asyncio.to_thread(
            runner.invoke, app, ["memory", "recall", "我女儿叫什么", "-p", "zhang", "--json"]
        )
        assert result.exit_code == 0, result.output
        assert "女儿叫小橙子，今年五岁" in result.stdout
        assert engine.store.count("zhang") == 15  # type: ignore[arg-type]
    finally:
        server.should_exit = True
        await task
        engine.close()


def test_import_indexes_the_store_once_enough_is_pending(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEARTH_MEMORY__INDEX_MIN_POINTS", "10")
    imported = runner.invoke(app, ["memory", "import", str(FIXTURE), "--person", "zhang"])
    assert imported.exit_code == 0, imported.output
    settings = make_settings(Path(os.environ["HEARTH_DATA_DIR"]))
    engine = build_memory(settings, UseEmbedder())
    try:
        info = engine.store._shard.info()  # type: ignore[attr-defined]
        assert info.points_count == info.indexed_vectors_count > 10
    finally:
        engine.close()
    recalled = runner.invoke(
        app, ["memory", "recall", "我女儿能吃花生酱吗", "--person", "zhang", "--json"]
    )
    data = orjson.loads(recalled.stdout)
    assert "小橙子对花生过敏" in [m["text"] for m in data["groups"]["safety"]]
