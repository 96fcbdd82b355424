"""The local LLM engine built for any x86-64 machine with AVX2, never for the build machine's CPU.

llama-cpp-python compiles llama.cpp when it is installed, and ggml's default is ``-march=native``:
a build made on a CPU with AVX-512 and AMX runs AMX code that crashes another CPU (or the same
model under a hypervisor that does not grant the tile state), and pip's wheel cache carries that
binary to every later install. So Hearth builds the wheel itself with a fixed baseline (Haswell:
SSE4.2, AVX, AVX2, FMA, F16C, BMI2; no AVX-512, no AVX-VNNI, no AMX), keeps it in its own cache
under a name that carries the flags, and scans the built libraries for any instruction above
the baseline before it is installed.

On a CPU with AVX-512 the same command also builds a second, fixed variant (x86-64-v4:
AVX-512 F/CD/BW/DQ/VL, still no VNNI, BF16, VBMI or AMX) and keeps its libraries beside the
installed package (``<venv>/share/hearth/engines/x86-64-v4/``), scanned the same way against its
own ceiling. Which one a llama.cpp server loads is decided each time it starts, by the CPU it
runs on (``providers/engines.py``): a copied install on an AVX2-only machine runs the baseline.

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
import zipfile
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
AVX512_CPU_FLAGS = ("avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl")


@dataclass(frozen=True)
class Engine:
    """One fixed build of llama.cpp: its CMake flags, the CPU flags it needs, and whether the
    scan allows EVEX (AVX-512) instructions in it. Never the build machine's CPU."""

    name: str
    cmake: dict[str, str]
    cpu_flags: tuple[str, ...]
    avx512: bool = False

    def cmake_args(self) -> str:
        return " ".join(f"-D{name}={value}" for name, value in self.cmake.items())

    def tag(self) -> str:
        """Names a wheel by what went into it: the version and the flags."""
        digest = hashlib.sha256(f"{LLAMA_VERSION} {self.cmake_args()}".encode()).hexdigest()
        return f"{LLAMA_VERSION}-{self.name}-{digest[:12]}"


BASELINE = Engine("x86-64-v3", CMAKE_FLAGS, BASELINE_CPU_FLAGS)
# x86-64-v4: AVX-512 F, CD, BW, DQ and VL (Skylake-SP, Ice Lake, Sapphire Rapids, Zen 4 and
# newer). ggml's GGML_AVX512 asks for exactly those; the extensions above v4 stay off.
AVX512 = Engine(
    "x86-64-v4", CMAKE_FLAGS | {"GGML_AVX512": "ON"}, BASELINE_CPU_FLAGS + AVX512_CPU_FLAGS, True
)
ENGINES = (BASELINE, AVX512)
ENGINE_FILE = "engine.json"  # written beside an extra engine's libraries once they passed the scan

AMX_MNEMONICS = frozenset(
    {
        "ldtilecfg", "sttilecfg", "tilerelease", "tilezero", "tileloadd", "tileloaddt1",
        "tilestored", "tdpbssd", "tdpbsud", "tdpbusd", "tdpbuud", "tdpbf16ps", "tdpfp16ps",
        "tcmmimfp16ps", "tcmmrlfp16ps",
    }
)  # fmt: skip
# AVX-VNNI is VEX-encoded (Alder Lake and later); the EVEX forms are caught as AVX-512 below.
VNNI_MNEMONICS = frozenset({"vpdpbusd", "vpdpbusds", "vpdpwssd", "vpdpwssds"})
# EVEX instructions of AVX-512 extensions above x86-64-v4 (VNNI, BF16, VBMI, VBMI2, IFMA,
# BITALG, VPOPCNTDQ, GFNI, VAES, VPCLMULQDQ, FP16): the v4 engine must hold none of them.
BEYOND_V4_MNEMONICS = VNNI_MNEMONICS | frozenset(
    {
        "vdpbf16ps", "vcvtne2ps2bf16", "vcvtneps2bf16", "vpermb", "vpermi2b", "vpermt2b",
        "vpmultishiftqb", "vpcompressb", "vpcompressw", "vpexpandb", "vpexpandw", "vpmadd52luq",
        "vpmadd52huq", "vpopcntb", "vpopcntw", "vpopcntd", "vpopcntq", "vpshufbitqmb",
        "vgf2p8affineqb", "vgf2p8affineinvqb", "vgf2p8mulb", "vaesenc", "vaesenclast",
        "vaesdec", "vaesdeclast", "vpclmulqdq",
    }
)  # fmt: skip
_BEYOND_V4_PATTERNS = re.compile(r"vpsh[lr]dv?[wdq]|v\w+(ph|sh)")  # VBMI2 shifts; FP16 (…ph/…sh)
_NOT_FP16 = frozenset({"vcvtph2ps", "vcvtps2ph"})  # F16C / AVX-512F conversions
# Prefixes that may stand before an EVEX (0x62) instruction in 64-bit mode: address size and
# segment overrides. In 64-bit mode 0x62 opens nothing but EVEX, i.e. AVX-512.
_EVEX_PREFIXES = frozenset({"67", "26", "2e", "36", "3e", "64", "65"})
_LINE = re.compile(r"^\s*[0-9a-f]+:\t((?:[0-9a-f]{2} )+)\s*\t?(?:\{vex\} )?(\S+)?")


def cmake_args() -> str:
    return BASELINE.cmake_args()


def build_tag() -> str:
    """Names the baseline wheel by what went into it: the version and the flags, never the
    builder's CPU."""
    return BASELINE.tag()


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hearth" / "wheels"


def engines_dir(prefix: str = sys.prefix) -> Path:
    """Where the extra engines' libraries live: inside the virtual environment, so a new venv
    starts without them and a removed one takes them along."""
    return Path(prefix) / "share" / "hearth" / "engines"


@dataclass
class IsaReport:
    """Instructions above the baseline found in one library, by kind."""

    library: Path
    instructions: int = 0
    amx: Counter[str] = field(default_factory=Counter)
    avx512: int = 0
    avx_vnni: Counter[str] = field(default_factory=Counter)
    beyond_v4: Counter[str] = field(default_factory=Counter)  # EVEX extensions above v4

    @property
    def above_baseline(self) -> int:
        return self.above(BASELINE)

    def above(self, engine: Engine) -> int:
        """Instructions the given engine's CPUs may lack (AMX and VEX AVX-VNNI for every one;
        any AVX-512 for the baseline, AVX-512 beyond v4 for the v4 engine)."""
        evex = sum(self.beyond_v4.values()) if engine.avx512 else self.avx512
        return sum(self.amx.values()) + evex + sum(self.avx_vnni.values())

    def as_json(self) -> dict[str, object]:
        return {
            "library": self.library.name,
            "instructions": self.instructions,
            "amx": dict(self.amx),
            "avx512": self.avx512,
            "avx512_beyond_v4": dict(self.beyond_v4),
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
            if _beyond_v4(mnemonic):
                report.beyond_v4[mnemonic] += 1
        elif mnemonic in AMX_MNEMONICS:
            report.amx[mnemonic] += 1
        elif mnemonic in VNNI_MNEMONICS:
            report.avx_vnni[mnemonic] += 1
    return report


def _beyond_v4(mnemonic: str) -> bool:
    if mnemonic in BEYOND_V4_MNEMONICS:
        return True
    return mnemonic not in _NOT_FP16 and _BEYOND_V4_PATTERNS.fullmatch(mnemonic) is not None


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


def check_libraries(libraries: list[Path], engine: Engine = BASELINE) -> list[IsaReport]:
    """Scans each library; raises SystemExit naming every one that runs above the engine's
    ceiling (the x86-64 AVX2 baseline unless told otherwise)."""
    if not libraries:
        raise SystemExit("no llama.cpp libraries to check (is llama-cpp-python installed?)")
    reports = [scan_library(lib) for lib in libraries]
    bad = [r for r in reports if r.above(engine)]
    if bad:
        ceiling = "x86-64 AVX2 baseline" if engine is BASELINE else f"{engine.name} engine's set"
        lines = [f"  {r.library}: {json.dumps(r.as_json())}" for r in bad]
        raise SystemExit(
            f"llama.cpp was built above the {ceiling}; these instructions would run "
            "unguarded on CPUs that lack them (or do not grant AMX tile state):\n"
            + "\n".join(lines)
            + "\nRebuild with `python -m providers.llama_build ensure --rebuild`."
        )
    return reports


def cached_wheel(cache: Path, engine: Engine = BASELINE) -> Path | None:
    folder = cache / engine.tag()
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    return wheels[0] if wheels else None


def build_wheel(cache: Path, python: str = sys.executable, engine: Engine = BASELINE) -> Path:
    """Compiles llama-cpp-python with the engine's fixed flags into ``cache/<tag>/`` (never
    pip's wheel cache, which keys on the source, not the flags)."""
    env = dict(os.environ)
    env["CMAKE_ARGS"] = engine.cmake_args()
    env["FORCE_CMAKE"] = "1"
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    folder = cache / engine.tag()
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
        json.dumps({"version": LLAMA_VERSION, "cmake_args": engine.cmake_args()}, indent=2)
    )
    return target


def install_engine(wheel: Path, engine: Engine, prefix: str = sys.prefix) -> list[IsaReport]:
    """Unpacks an extra engine's libraries from its wheel into ``engines_dir/<name>/``, scans
    them against the engine's ceiling and only then writes the file that makes them usable."""
    target = engines_dir(prefix) / engine.name
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{engine.name}-"))
    try:
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.startswith("llama_cpp/lib/") and not member.endswith("/"):
                    (staging / Path(member).name).write_bytes(archive.read(member))
        unique: dict[str, Path] = {}
        for path in sorted(staging.glob("*.so*")):
            unique.setdefault(hashlib.sha256(path.read_bytes()).hexdigest(), path)
        reports = check_libraries(sorted(unique.values()), engine)
        record = {
            "engine": engine.name,
            "version": LLAMA_VERSION,
            "tag": engine.tag(),
            "cpu_flags": list(engine.cpu_flags),
            "checked": [r.as_json() for r in reports],
        }
        (staging / ENGINE_FILE).write_text(json.dumps(record, indent=2))
        shutil.rmtree(target, ignore_errors=True)
        staging.replace(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return reports


_FLAGS_LINE = re.compile(r"^flags\s*:\s*(.*)$", re.MULTILINE)


def has_cpu_flags(cpuinfo: str) -> bool:
    """Whether a /proc/cpuinfo text has an x86 flags line at all."""
    return _FLAGS_LINE.search(cpuinfo) is not None


def missing_cpu_flags(cpuinfo: str, needed: Iterable[str] = BASELINE_CPU_FLAGS) -> list[str]:
    """Flags (the baseline's unless told) absent from a /proc/cpuinfo text (x86-64 only; []
    elsewhere)."""
    match = _FLAGS_LINE.search(cpuinfo)
    if match is None:
        return []
    present = set(match.group(1).split())
    return [flag for flag in needed if flag not in present]


def engines_for(cpuinfo: str, which: str) -> list[Engine]:
    """The extra engines ``ensure`` installs: ``auto`` those this CPU can run (an x86 flags
    line with all their flags), ``all`` every one, ``baseline`` none."""
    extra = [engine for engine in ENGINES if engine is not BASELINE]
    if which == "all":
        return extra
    if which == "baseline" or not has_cpu_flags(cpuinfo):
        return []
    return [engine for engine in extra if not missing_cpu_flags(cpuinfo, engine.cpu_flags)]


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
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        cpuinfo = ""
    prefix = subprocess.run(
        [args.python, "-c", "import sys; print(sys.prefix)"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    for engine in engines_for(cpuinfo, args.engines):
        extra = None if args.rebuild else cached_wheel(cache, engine)
        if extra is None:
            print(f"building the {engine.name} engine (4-7 min on 2 cores): {engine.cmake_args()}")
            extra = build_wheel(cache, args.python, engine)
        reports = install_engine(extra, engine, prefix)
        total = sum(r.instructions for r in reports)
        evex = sum(r.avx512 for r in reports)
        print(
            f"installed the {engine.name} engine in {engines_dir(prefix) / engine.name}: "
            f"{total} instructions ({evex} AVX-512), none above {engine.name}, no AMX; "
            "used only on CPUs with " + ", ".join(engine.cpu_flags[len(BASELINE_CPU_FLAGS) :])
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
    ensure.add_argument(
        "--engines",
        choices=("auto", "all", "baseline"),
        default=os.environ.get("HEARTH_ENGINES", "auto"),
        help="extra engines beside the baseline: auto = those this CPU can run (default; "
        "env HEARTH_ENGINES), all, or baseline = none",
    )
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
