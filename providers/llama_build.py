"""The local LLM engine built for any x86-64 machine with AVX2, never for the build machine's CPU.

llama-cpp-python compiles llama.cpp when it is installed, and ggml's default is ``-march=native``:
a build made on a CPU with AVX-512 and AMX runs AMX code that crashes another CPU (or the same
model under a hypervisor that does not grant the tile state), and pip's wheel cache carries that
binary to every later install. So Hearth builds the wheel itself with a fixed baseline (Haswell:
SSE4.2, AVX, AVX2, FMA, F16C, BMI2; no AVX-512, no AVX-VNNI, no AMX), keeps it in its own cache
under a name that carries the flags, and scans the built libraries for any instruction above
the baseline before it is installed.

Standard library only: ``scripts/install.sh`` runs it before Hearth is installed
(``python -m providers.llama_build ensure``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

LLAMA_CPP_PYTHON = "llama-cpp-python"
LLAMA_VERSION = "0.3.36"
# ggml's CMake options: native off, the Haswell baseline on, everything above it off. With these
# the same wheel comes out of any build machine.
CMAKE_FLAGS: dict[str, str] = {
    "GGML_NATIVE": "OFF",
    "GGML_BACKEND_DL": "OFF",
    "GGML_CPU_ALL_VARIANTS": "OFF",
    "GGML_SSE42": "ON",
    "GGML_AVX": "ON",
    "GGML_AVX2": "ON",
    "GGML_FMA": "ON",
    "GGML_F16C": "ON",
    "GGML_BMI2": "ON",
    "GGML_AVX_VNNI": "OFF",
    "GGML_AVX512": "OFF",
    "GGML_AVX512_VBMI": "OFF",
    "GGML_AVX512_VNNI": "OFF",
    "GGML_AVX512_BF16": "OFF",
    "GGML_AMX_TILE": "OFF",
    "GGML_AMX_INT8": "OFF",
    "GGML_AMX_BF16": "OFF",
}
# /proc/cpuinfo flags a CPU needs to run that build.
BASELINE_CPU_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "bmi2")

AMX_MNEMONICS = frozenset(
    {
        "ldtilecfg", "sttilecfg", "tilerelease", "tilezero", "tileloadd", "tileloaddt1",
        "tilestored", "tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps", "tdpfp16ps",
        "tcmmimfp16ps", "tcmmrlfp16ps",
    }
)  # fmt: skip
# AVX-VNNI is VEX-encoded (Alder Lake and later); the EVEX forms are caught as AVX-512 below.
VNNI_MNEMONICS = frozenset({"vpdpbusd", "vpdpbusds", "vpdpwssd", "vpdpwssds"})
# Prefixes that may stand before an EVEX (0x62) instruction in 64-bit mode: address size and
# segment overrides. In 64-bit mode 0x62 opens nothing but EVEX, i.e. AVX-512.
_EVEX_PREFIXES = frozenset({"67", "26", "2e", "36", "3e", "64", "65"})
_LINE = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t?(?:\{vex\} )?(\S+)?")


def cmake_args() -> str:
    return " ".join(f"-D{name}={value}" for name, value in CMAKE_FLAGS.items())


def build_tag() -> str:
    """Names a wheel by what went into it: the version and the flags, never the builder's CPU."""
    digest = hashlib.sha256(f"{LLAMA_VERSION} {cmake_args()}".encode()).hexdigest()
    return f"{LLAMA_VERSION}-x86-64-v3-{digest[:12]}"


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hearth" / "wheels"


@dataclass
class IsaReport:
    """Instructions above the baseline found in one library, by kind."""

    library: Path
    instructions: int = 0
    amx: Counter[str] = field(default_factory=Counter)
    avx512: int = 0
    avx_vnni: Counter[str] = field(default_factory=Counter)

    @property
    def above_baseline(self) -> int:
        return sum(self.amx.values()) + self.avx512 + sum(self.avx_vnni.values())

    def as_json(self) -> dict[str, object]:
        return {
            "library": self.library.name,
            "instructions": self.instructions,
            "amx": dict(self.amx),
            "avx512": self.avx512,
            "avx_vnni": dict(self.avx_vnni),
        }


def scan_disassembly(lines: Iterable[str], library: Path) -> IsaReport:
    """Counts AMX, AVX-512 (EVEX-encoded) and AVX-VNNI instructions in ``objdump -d`` output."""
    report = IsaReport(library)
    for line in lines:
        match = _LINE.match(line)
        if match is None or match.group(2) is None:
            continue
        report.instructions += 1
        raw = match.group(1).split()
        mnemonic = match.group(2)
        first = next((byte for byte in raw if byte not in _EVEX_PREFIXES), "")
        if first == "62":
            report.avx512 += 1
        elif mnemonic in AMX_MNEMONICS:
            report.amx[mnemonic] += 1
        elif mnemonic in VNNI_MNEMONICS:
            report.avx_vnni[mnemonic] += 1
    return report


def scan_library(library: Path) -> IsaReport:
    objdump = shutil.which("objdump")
    if objdump is None:
        raise SystemExit("objdump not found (apt-get install binutils)")
    done = subprocess.run(
        [objdump, "-d", "-w", str(library)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"objdump could not read {library}: {done.stderr.strip()}")
    out = done.stdout
    return scan_disassembly(out.splitlines(), library)


def installed_libraries(python: str = sys.executable) -> list[Path]:
    """The shared libraries of the llama_cpp package installed for ``python``."""
    code = "import importlib.util as u; s = u.find_spec('llama_cpp'); print(s.origin if s else '')"
    origin = subprocess.run(
        [python, "-c", code], check=True, capture_output=True, text=True
    ).stdout.strip()
    if not origin:
        return []
    unique: dict[str, Path] = {}  # a wheel holds copies, not symlinks, of each versioned name
    for path in sorted((Path(origin).parent / "lib").glob("*.so*")):
        unique.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
    return sorted(unique.values())


def check_libraries(libraries: list[Path]) -> list[IsaReport]:
    """Scans each library; raises SystemExit naming every one that runs above the baseline."""
    if not libraries:
        raise SystemExit("no llama.cpp libraries to check (is llama-cpp-python installed?)")
    reports = [scan_library(lib) for lib in libraries]
    bad = [r for r in reports if r.above_baseline]
    if bad:
        lines = [f"  {r.library}: {json.dumps(r.as_json())}" for r in bad]
        raise SystemExit(
            "llama.cpp was built above the x86-64 AVX2 baseline; these instructions would run "
            "unguarded on CPUs that lack them (or do not grant AMX tile state):\n"
            + "\n".join(lines)
            + "\nRebuild with `python -m providers.llama_build ensure --rebuild`."
        )
    return reports


def cached_wheel(cache: Path) -> Path | None:
    folder = cache / build_tag()
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    return wheels[0] if wheels else None


def build_wheel(cache: Path, python: str = sys.executable) -> Path:
    """Compiles llama-cpp-python with the baseline flags into ``cache/<tag>/`` (never pip's
    wheel cache, which keys on the source, not the flags)."""
    env = dict(os.environ)
    env["CMAKE_ARGS"] = cmake_args()
    env["FORCE_CMAKE"] = "1"
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    folder = cache / build_tag()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        subprocess.run(
            [
                python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
                "--no-binary", LLAMA_CPP_PYTHON, "-w", tmp,
                f"{LLAMA_CPP_PYTHON}=={LLAMA_VERSION}",
            ],
            check=True,
            env=env,
        )  # fmt: skip
        built = next(Path(tmp).glob("llama_cpp_python-*.whl"))
        target = folder / built.name
        built.replace(target)
    (folder / "build.json").write_text(
        json.dumps({"version": LLAMA_VERSION, "cmake_args": cmake_args()}, indent=2)
    )
    return target


def missing_cpu_flags(cpuinfo: str) -> list[str]:
    """Baseline flags absent from a /proc/cpuinfo text (x86-64 only; [] elsewhere)."""
    match = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.MULTILINE)
    if match is None:
        return []
    present = set(match.group(1).split())
    return [flag for flag in BASELINE_CPU_FLAGS if flag not in present]


def cpu_supports_baseline(cpuinfo_path: Path = Path("/proc/cpuinfo")) -> list[str]:
    try:
        return missing_cpu_flags(cpuinfo_path.read_text())
    except OSError:
        return []


def _ensure(args: argparse.Namespace) -> int:
    cache = Path(args.cache) if args.cache else default_cache()
    wheel = None if args.rebuild else cached_wheel(cache)
    if wheel is None:
        print(f"building {LLAMA_CPP_PYTHON} {LLAMA_VERSION} (4-7 min on 2 cores): {cmake_args()}")
        wheel = build_wheel(cache, args.python)
    pip = [args.python, "-m", "pip", "install", "-q"]
    # always our wheel (a few seconds): whatever was installed before, a native build included,
    # is replaced, so one scan below decides
    subprocess.run([*pip, "--force-reinstall", "--no-deps", str(wheel)], check=True)
    constraints = [arg for c in args.constraint for arg in ("-c", c)]
    spec = f"{LLAMA_CPP_PYTHON}[server] @ {wheel.resolve().as_uri()}"
    subprocess.run([*pip, *constraints, spec], check=True)  # the server extra's dependencies
    for report in check_libraries(installed_libraries(args.python)):
        print(
            f"checked {report.library.name}: {report.instructions} instructions, "
            "no AMX, no AVX-512, no AVX-VNNI"
        )
    return 0


def _check(args: argparse.Namespace) -> int:
    libraries = [Path(p) for p in args.library] or installed_libraries(args.python)
    for report in check_libraries(libraries):
        print(json.dumps(report.as_json()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m providers.llama_build", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    ensure = sub.add_parser("ensure", help="build (or reuse) the portable wheel and install it")
    ensure.add_argument("--python", default=sys.executable)
    ensure.add_argument("--cache", default=None, help="default: ~/.cache/hearth/wheels")
    ensure.add_argument("--constraint", "-c", action="append", default=[])
    ensure.add_argument("--rebuild", action="store_true")
    ensure.set_defaults(run=_ensure)
    check = sub.add_parser("check", help="scan the installed (or given) llama.cpp libraries")
    check.add_argument("--python", default=sys.executable)
    check.add_argument("library", nargs="*")
    check.set_defaults(run=_check)
    sub.add_parser("flags", help="print the CMake arguments").set_defaults(
        run=lambda _a: print(cmake_args()) or 0
    )
    args = parser.parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
