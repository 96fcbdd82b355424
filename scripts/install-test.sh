#!/usr/bin/env bash
# What only the test suite needs, on top of scripts/install.sh: Debian's chromium and a CJK font
# for the console's browser tests, playwright-core from npm (it drives that chromium; it never
# downloads a browser of its own), and qemu-user (the local LLM engine is run on an emulated
# Haswell CPU). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
[[ -x /usr/bin/chromium ]] || need_apt+=(chromium)
fc-list 2>/dev/null | grep -qi "wenquanyi\|noto sans cjk" || need_apt+=(fonts-wqy-microhei)
command -v npm >/dev/null || need_apt+=(npm)
command -v qemu-x86_64 >/dev/null || need_apt+=(qemu-user)  # runs the engine on an emulated Haswell
command -v curl >/dev/null || need_apt+=(curl)  # the README's API examples run as written
if ((${#need_apt[@]})); then
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
[[ -d tests/browser/node_modules/playwright-core ]] \
  || (cd tests/browser && npm ci --no-audit --no-fund --silent)
# real recordings of nine speakers for the voice tests and `hearth bench voices`: the test data of
# the speakerbox wheel, downloaded (never installed) into the models cache
.venv/bin/python -m bench.voice_recordings data/models/parts >/dev/null
