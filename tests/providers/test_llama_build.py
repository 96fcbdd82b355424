"""The local LLM engine is built for any x86-64 CPU with AVX2: the installed llama.cpp libraries
hold no AMX, AVX-512 or AVX-VNNI instruction, and the scan that says so does find them in a
library that has them (compiled here from a few lines of assembly, whatever this CPU runs)."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from providers import llama_build
from providers.llama_build import (
    check_libraries,
    installed_libraries,
    missing_cpu_flags,
    scan_library,
)

ABOVE_BASELINE = r"""
void amx(void *cfg, void *p) {
  __asm__ volatile("ldtilecfg (%0)\n\ttileloadd (%1,%2,1), %%tmm0\n\t"
                   "tdpbssd %%tmm2, %%tmm1, %%tmm0\n\ttilerelease"
                   :: "r"(cfg), "r"(p), "r"(64L) : "memory");
}
void avx512(void) {
  __asm__ volatile("vaddps %%zmm1, %%zmm2, %%zmm3\n\t"
                   "vpaddd %%ymm17, %%ymm18, %%ymm19" ::: "memory");
}
void avx_vnni(void) { __asm__ volatile("%{vex%} vpdpbusd %%ymm1, %%ymm2, %%ymm3" ::: "memory"); }
void avx2(void) {
  __asm__ volatile("vpaddd %%ymm1, %%ymm2, %%ymm3\n\t"
                   "vfmadd231ps %%ymm1, %%ymm2, %%ymm3" ::: "memory");
}
"""


@pytest.fixture(scope="module")
def above_baseline_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A shared library with AMX, AVX-512 and AVX-VNNI code (never run: only disassembled)."""
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the probe library"
    folder = tmp_path_factory.mktemp("isa")
    source = folder / "probe.c"
    source.write_text(ABOVE_BASELINE)
    library = folder / "libprobe.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def test_installed_llama_cpp_runs_on_the_avx2_baseline() -> None:
    libraries = installed_libraries()
    names = {lib.name.split(".so")[0] for lib in libraries}
    assert {"libggml-cpu", "libllama"} <= names, names
    for report in check_libraries(libraries):
        assert report.instructions > 1000, report  # the disassembly was really read
        assert report.above_baseline == 0, report.as_json()


def test_the_scan_finds_amx_avx512_and_avx_vnni(above_baseline_library: Path) -> None:
    report = scan_library(above_baseline_library)
    assert dict(report.amx) == {"ldtilecfg": 1, "tileloadd": 1, "tdpbssd": 1, "tilerelease": 1}
    assert report.avx512 == 2  # a zmm add and an EVEX-only ymm17 add
    assert dict(report.avx_vnni) == {"vpdpbusd": 1}
    with pytest.raises(SystemExit, match="above the x86-64 AVX2 baseline"):
        check_libraries([above_baseline_library])


def test_the_build_flags_never_ask_for_the_build_machine() -> None:
    flags = llama_build.CMAKE_FLAGS
    assert flags["GGML_NATIVE"] == "OFF"
    assert all(flags[f] == "OFF" for f in flags if "AMX" in f or "AVX512" in f)
    assert flags["GGML_AVX2"] == flags["GGML_FMA"] == flags["GGML_F16C"] == "ON"
    # the cache name is made of the version and the flags only: the same on every machine
    assert llama_build.build_tag().startswith(f"{llama_build.LLAMA_VERSION}-x86-64-v3-")


def test_cpu_baseline_check_names_what_is_missing() -> None:
    haswell = "processor : 0\nflags : fpu sse4_2 avx avx2 fma f16c bmi2 popcnt\n"
    sandy_bridge = "processor : 0\nflags : fpu sse4_2 avx popcnt\n"
    assert missing_cpu_flags(haswell) == []
    assert missing_cpu_flags(sandy_bridge) == ["avx2", "fma", "f16c", "bmi2"]
    assert missing_cpu_flags("no flags line (not x86)") == []


V4_AND_BEYOND = r"""
void v4(void) {
  __asm__ volatile("vaddps %%zmm1, %%zmm2, %%zmm3\n\t"
                   "vcvtph2ps %%ymm1, %%zmm2\n\t"
                   "vpshufb %%zmm1, %%zmm2, %%zmm3" ::: "memory");
}
void beyond_v4(void) {
  __asm__ volatile("vpdpbusd %%zmm1, %%zmm2, %%zmm3\n\t"
                   "vpermb %%zmm1, %%zmm2, %%zmm3\n\t"
                   "vaddph %%zmm1, %%zmm2, %%zmm3" ::: "memory");
}
"""


def _probe(folder: Path, source: str, name: str) -> Path:
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the probe library"
    (folder / f"{name}.c").write_text(source)
    library = folder / f"lib{name}.so"
    cmd = [gcc, "-shared", "-fPIC", "-o", str(library), str(folder / f"{name}.c")]
    subprocess.run(cmd, check=True)
    return library


def test_the_avx512_engine_may_hold_avx512_but_nothing_beyond_v4(tmp_path: Path) -> None:
    report = scan_library(_probe(tmp_path, V4_AND_BEYOND, "v4"))
    assert report.avx512 == 6
    assert dict(report.beyond_v4) == {"vpdpbusd": 1, "vpermb": 1, "vaddph": 1}
    assert report.above(llama_build.AVX512) == 3  # only the three beyond v4
    assert report.above(llama_build.BASELINE) == 6  # every EVEX instruction
    with pytest.raises(SystemExit, match="above the x86-64-v4 engine's set"):
        check_libraries([report.library], llama_build.AVX512)


def _wheel(folder: Path, library: Path) -> Path:
    wheel = folder / "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name in ("libllama.so", "libllama.so.0"):
            archive.write(library, f"llama_cpp/lib/{name}")
        archive.writestr("llama_cpp/__init__.py", "")
    return wheel


def test_an_extra_engine_is_usable_only_after_its_scan_passed(tmp_path: Path) -> None:
    prefix = str(tmp_path / "venv")
    target = llama_build.engines_dir(prefix) / "x86-64-v4"
    bad = _wheel(tmp_path, _probe(tmp_path, V4_AND_BEYOND, "bad"))
    with pytest.raises(SystemExit, match="vpdpbusd"):
        llama_build.install_engine(bad, llama_build.AVX512, prefix)
    assert not target.exists()
    assert not list(target.parent.iterdir())  # no staging folder left behind
    good = _wheel(tmp_path, _probe(tmp_path, V4_AND_BEYOND.split("void beyond_v4")[0], "good"))
    llama_build.install_engine(good, llama_build.AVX512, prefix)
    record = json.loads((target / llama_build.ENGINE_FILE).read_text())
    assert record["engine"] == "x86-64-v4" and record["version"] == llama_build.LLAMA_VERSION
    assert {p.name for p in target.iterdir()} == {"libllama.so", "libllama.so.0", "engine.json"}


def test_ensure_installs_extra_engines_only_for_a_cpu_that_runs_them() -> None:
    haswell = "flags : fpu sse4_2 avx avx2 fma f16c bmi2\n"
    skylake_sp = haswell.rstrip() + " avx512f avx512cd avx512bw avx512dq avx512vl\n"
    assert llama_build.engines_for(haswell, "auto") == []
    assert llama_build.engines_for(skylake_sp, "auto") == [llama_build.AVX512]
    assert llama_build.engines_for(skylake_sp, "baseline") == []
    assert llama_build.engines_for(haswell, "all") == [llama_build.AVX512]
    v4 = llama_build.AVX512.cmake
    assert v4["GGML_AVX512"] == "ON" and v4["GGML_NATIVE"] == "OFF"
    assert all(v4[f] == "OFF" for f in v4 if "AMX" in f or "VNNI" in f or "BF16" in f)
    assert llama_build.AVX512.tag().startswith(f"{llama_build.LLAMA_VERSION}-x86-64-v4-")
