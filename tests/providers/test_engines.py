"""Which llama.cpp build a local server loads is decided by the CPU it starts on, and an extra
engine that fails there gives way to the baseline — reported, never hidden. Every verdict here
holds on any x86-64 CPU: the CPUs are /proc/cpuinfo texts, and the "extra engine" the servers
start on is either a broken library folder or the baseline's own libraries under another name."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import httpx
import pytest
from structlog.testing import capture_logs

from config.settings import load_settings
from providers.engines import EngineChoice, EngineNotUsable, choose_engine
from providers.llama_build import AVX512, ENGINE_FILE, engines_dir, installed_libraries
from providers.processes import LocalLLMServer, free_port

HASWELL = "processor : 0\nflags : fpu sse4_2 avx avx2 fma f16c bmi2\n"
SKYLAKE_SP = HASWELL.rstrip() + " avx512f avx512cd avx512bw avx512dq avx512vl\n"


def install_fake_engine(prefix: Path, version: str = "0.3.36") -> Path:
    folder = engines_dir(str(prefix)) / AVX512.name
    folder.mkdir(parents=True)
    (folder / "libllama.so").write_bytes(b"\x7fELF")
    (folder / ENGINE_FILE).write_text(json.dumps({"engine": AVX512.name, "version": version}))
    return folder


def test_auto_picks_the_avx512_engine_only_on_a_cpu_that_has_it(tmp_path: Path) -> None:
    folder = install_fake_engine(tmp_path)
    chosen = choose_engine("auto", SKYLAKE_SP, str(tmp_path), version="0.3.36")
    assert chosen.name == "x86-64-v4" and chosen.lib_dir == folder
    assert chosen.env() == {"LLAMA_CPP_LIB_PATH": str(folder), "MTMD_CPP_LIB": str(folder)}
    on_haswell = choose_engine("auto", HASWELL, str(tmp_path), version="0.3.36")
    assert on_haswell.is_baseline and on_haswell.env() == {}
    assert "lacks avx512f" in on_haswell.reason
    assert choose_engine("auto", "no flags line", str(tmp_path), version="0.3.36").is_baseline


def test_auto_falls_back_when_the_engine_is_missing_or_from_another_version(
    tmp_path: Path,
) -> None:
    missing = choose_engine("auto", SKYLAKE_SP, str(tmp_path), version="0.3.36")
    assert missing.is_baseline and "not installed" in missing.reason
    install_fake_engine(tmp_path, version="0.3.35")
    stale = choose_engine("auto", SKYLAKE_SP, str(tmp_path), version="0.3.36")
    assert stale.is_baseline and "built for llama-cpp-python 0.3.35" in stale.reason


def test_a_named_engine_that_cannot_run_is_an_error_that_says_why(tmp_path: Path) -> None:
    with pytest.raises(EngineNotUsable, match=r"lacks avx512f.*--engines all"):
        choose_engine("x86-64-v4", HASWELL, str(tmp_path), version="0.3.36")
    with pytest.raises(EngineNotUsable, match="not installed"):
        choose_engine("x86-64-v4", SKYLAKE_SP, str(tmp_path), version="0.3.36")
    with pytest.raises(EngineNotUsable, match="unknown engine"):
        choose_engine("x86-64-v9", SKYLAKE_SP, str(tmp_path), version="0.3.36")
    assert choose_engine("x86-64-v3", SKYLAKE_SP, str(tmp_path)).is_baseline


def _server(tmp_path: Path, engine: EngineChoice) -> LocalLLMServer:
    defaults = load_settings()
    model = defaults.resolve(defaults.local_llm.model_file).resolve()
    assert model.is_file(), "run `hearth models install` (make test does)"
    settings = defaults.local_llm.model_copy(update={"port": free_port()})
    return LocalLLMServer(settings, model, tmp_path, engine=engine)


async def _answers(server: LocalLLMServer) -> None:
    body = {"model": "local", "messages": [{"role": "user", "content": "1+1="}], "max_tokens": 4}
    async with httpx.AsyncClient(timeout=120) as client:
        response = await client.post(f"{server.base_url}/chat/completions", json=body)
    assert response.status_code == 200, response.text


@pytest.mark.local_llm
async def test_an_extra_engine_that_cannot_load_gives_way_to_the_baseline(tmp_path: Path) -> None:
    broken = install_fake_engine(tmp_path / "venv")  # a libllama.so that is not a library
    server = _server(tmp_path, EngineChoice(AVX512.name, broken, "test"))
    assert server.child.env["LLAMA_CPP_LIB_PATH"] == str(broken)
    try:
        with capture_logs() as logs:
            await server.start()
        assert server.engine.is_baseline and server.child.env == {}
        assert "x86-64-v4 failed here" in server.engine.reason
        [fell] = [e for e in logs if e["event"] == "local_llm.engine_fell_back"]
        assert fell["engine"] == "x86-64-v4" and fell["to"] == "x86-64-v3"
        assert fell["log_level"] == "error"
        await _answers(server)
    finally:
        server.stop()


@pytest.mark.local_llm
async def test_a_server_that_crashed_on_an_extra_engine_restarts_on_the_baseline(
    tmp_path: Path,
) -> None:
    # the installed package's own libraries, under the extra engine's name: they run anywhere
    own = installed_libraries()[0].parent
    server = _server(tmp_path, EngineChoice(AVX512.name, own, "test"))
    try:
        await server.start(complete=False)
        assert server.engine.name == "x86-64-v4"
        assert server.child.proc is not None
        os.killpg(server.child.proc.pid, signal.SIGSEGV)  # what a bad kernel on this CPU does
        assert server.child.proc.wait(30) == -signal.SIGSEGV
        with capture_logs() as logs:
            await server.start(complete=False)  # what the supervisor's restart calls
        assert server.engine.is_baseline
        [fell] = [e for e in logs if e["event"] == "local_llm.engine_fell_back"]
        assert "SIGSEGV" in fell["why"]
        await _answers(server)
    finally:
        server.stop()
