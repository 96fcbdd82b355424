"""The local LLM engine is built for any x86-64 CPU with AVX2: the installed llama.cpp libraries
hold no AMX, AVX-512 or AVX-VNNI instruction, and the scan that says so does find them in a
library that has them (compiled here from a few lines of assembly, whatever this CPU runs)."""

from __future__ import annotations

import shutil
import subprocess
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
