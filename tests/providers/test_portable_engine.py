"""The installed llama.cpp engine answers on a CPU with nothing above the AVX2 baseline: the real
library and model, run under qemu's user-mode emulation of an Intel Haswell (AVX2, FMA, F16C; no
AVX-512, no AVX-VNNI, no AMX). The emulated CPU is the same on every host, so the verdict does
not depend on the machine the tests run on. (A ``-march=native`` build from an AVX-512 machine
dies there with SIGILL at its first instruction: exit 132, checked by hand, see the README.)"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from config.settings import load_settings

ANSWER = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_threads=2, n_ctx=256, verbose=False)
out = llm.create_completion("1+1=", max_tokens=2, temperature=0)
print("ANSWER", repr(out["choices"][0]["text"]))
"""


@pytest.mark.local_llm
@pytest.mark.timeout(600)
def test_the_installed_engine_answers_on_an_emulated_haswell() -> None:
    qemu = shutil.which("qemu-x86_64")
    assert qemu, "qemu-user is needed (scripts/install-test.sh installs it)"
    settings = load_settings()
    model = settings.resolve(settings.local_llm.model_file)
    assert model.is_file(), "run `hearth models install`"
    done = subprocess.run(
        [qemu, "-cpu", "Haswell", sys.executable, "-c", ANSWER, str(model)],
        capture_output=True, text=True, timeout=540,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ANSWER '2" in done.stdout, done.stdout
