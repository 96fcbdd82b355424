"""``hearth bench engine``: the local LLM engine's tokens/s (prompt processing and generation) for
the installed build, and for any other llama-cpp-python build given as an unpacked wheel folder
(e.g. a ``-march=native`` build, to see what the portable baseline costs). Builds are measured in
fresh processes, alternated ``rounds`` times so the VM's drift hits each alike."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from config.settings import HearthSettings

# The measurement itself, run in a child so each build is imported on its own.
MEASURE = """
import json, sys, time
from llama_cpp import Llama, __file__ as where
model, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
llm = Llama(model_path=model, n_threads=threads, n_ctx=2048, verbose=False)
prompt = "你是一个家庭助手。" * 40 + "\\n请用三句话介绍一下杭州西湖。"
tokens = llm.tokenize(prompt.encode())
out = []
for _ in range(reps):
    llm.reset()
    t0 = time.perf_counter()
    llm.eval(tokens)
    t1 = time.perf_counter()
    n = 0
    for _tok in llm.generate([], temp=0.0, reset=False):
        n += 1
        if n >= 64:
            break
    out.append([len(tokens) / (t1 - t0), n / (time.perf_counter() - t1)])
print(json.dumps({"where": where, "runs": out}))
"""


def measure(model: Path, site: Path | None, threads: int, reps: int) -> list[list[float]]:
    env = dict(os.environ)
    if site is not None:
        env["PYTHONPATH"] = f"{site}{os.pathsep}{env.get('PYTHONPATH', '')}"
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(model), str(threads), str(reps)],
        env=env, capture_output=True, text=True, check=True, timeout=900,
    )  # fmt: skip
    runs: list[list[float]] = json.loads(done.stdout.strip().splitlines()[-1])["runs"]
    return runs


def main(settings: HearthSettings, sites: list[Path], rounds: int, reps: int) -> None:
    model = settings.resolve(settings.local_llm.model_file)
    builds: dict[str, Path | None] = {"installed": None} | {str(s): s for s in sites}
    results: dict[str, list[list[float]]] = {name: [] for name in builds}
    for _ in range(rounds):
        for name, site in builds.items():
            results[name] += measure(model, site, settings.local_llm.threads, reps)
    title = f"hearth bench engine — {model.name}, {settings.local_llm.threads} threads"
    table = Table(
        "build", "prompt tok/s min–max (median)", "generated tok/s min–max (median)", title=title
    )
    for name, runs in results.items():
        cells = []
        for column in (0, 1):
            values = [run[column] for run in runs]
            cells.append(f"{min(values):.1f}–{max(values):.1f} ({statistics.median(values):.1f})")
        table.add_row(name, *cells)
    Console().print(table)
