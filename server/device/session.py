"""``DeviceSession``: thin asyncio glue between one WebSocket and its ``DeviceProtocol``.

Reads frames, feeds the state machine, runs at most one turn at a time (a new utterance or an
``abort`` cancels the current one at once and answers ``tts stop``), runs the device MCP
handshake in the background, enforces the hello/idle deadlines, and on the way out hands the
transcript to the session-ended hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

import structlog
from redis.exceptions import RedisError
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from config.settings import SessionSettings
from memory.schema import PersonId
from providers.errors import ProviderError
from providers.opus import OpusEncoder
from server import metrics
from server.auth import DeviceCredentials
from server.device.conversation import Conversation, by_person
from server.device.early_asr import EarlyTranscript, EarlyTranscripts
from server.device.enrolling import run_enrolment
from server.device.enrolment import Enrol, GuidedEnrolment, Say, Stage
from server.device.enrolment_words import enrolment_request
from server.device.listening import (
    EndReason,
    ListenerEvent,
    SpeechPaused,
    SpeechStarted,
    UtteranceEnded,
)
from server.device.phrases import is_exit_phrase, is_one_of
from server.device.turn import Turn, TurnServices
from server.device.voice_input import UndecodableAudio, VoiceInput, VoiceServices
from server.mcp.client import DeviceMcpClient, McpCallError
from server.persons import default_person
from server.protocol.errors import CloseCode, ProtocolError
from server.protocol.machine import DeviceProtocol
from server.protocol.messages import (
    AbortRequested,
    AudioParams,
    AudioReceived,
    Event,
    HelloReceived,
    IgnoredMessage,
    ListenDetected,
    ListenStarted,
    ListenStopped,
    MalformedMessage,
    McpReceived,
    PingReceived,
)
from server.tools import Sharing, ToolContext
from server.voices.identify import Identification
from server.voices.speaking import SpeakerIdentifier
from workers.contract import Said

log = structlog.get_logger(__name__)
MAX_PENDING_UTTERANCES = 3  # utterances of one device waiting for ASR; more are refused


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """What the write path receives when a session ends."""

    session_id: str
    device_id: str
    client_id: str
    person: str
    started_at: float
    ended_at: float
    end_reason: str
    transcript: list[Said]


class SessionEndHook(Protocol):
    async def session_ended(self, record: SessionRecord) -> None: ...


PersonResolver = Callable[[str], Awaitable[PersonId]]


async def own_person(device_id: str) -> PersonId:
    """The unmapped-device policy: each device is its own person (see server.persons)."""
    return default_person(device_id)


@dataclass
class SessionServices:
    turn: TurnServices
    hello_timeout_s: float
    idle_timeout_s: float
    max_malformed: int
    # where camera boards post photos; "{host}" becomes the host the device reached us by
    # (the Host header of its WebSocket request) unless server.public_host names one
    vision_url: str
    max_transcript_utterances: int = 2000
    end_hooks: list[SessionEndHook] = field(default_factory=list)
    resolve_person: PersonResolver = own_person
    voice: VoiceServices | None = None  # None: text turns only (listen detect)
    # who of the household is speaking (server.voices); None, or no enrolled voice: the device's
    # person speaks every word, as before
    speakers: SpeakerIdentifier | None = None
    # the token announced with vision_url: minted for the session's device (server.vision)
    vision_token: Callable[[DeviceCredentials], str] = lambda creds: "unsupported"


# an identification still running when ASR is done gets this long; then the device's person
SPEAKER_WAIT_S = 1.0
_HOST = re.compile(r"[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\]")


class DeviceSession:
    def __init__(
        self, ws: ServerConnection, creds: DeviceCredentials, services: SessionServices
    ) -> None:
        self.ws = ws
        self.creds = creds
        self.services = services
        self.settings: SessionSettings = services.turn.session
        self.clock = services.turn.clock
        self.session_id = str(uuid.uuid4())
        audio = services.turn.audio
        self.protocol = DeviceProtocol(
            self.session_id,
            version=creds.protocol_version,
            downlink=AudioParams(
                sample_rate=audio.downlink_sample_rate, frame_duration=audio.frame_ms
            ),
            now=self.clock(),
            hello_timeout_s=services.hello_timeout_s,
            idle_timeout_s=services.idle_timeout_s,
            max_malformed=services.max_malformed,
        )
        self.encoder = OpusEncoder(
            audio.downlink_sample_rate, audio.frame_ms, audio.opus_complexity
        )
        self.conversation = Conversation(services.turn.session.history_turns)
        self.mcp: DeviceMcpClient | None = None
        self.person = PersonId("")
        self._send_lock = asyncio.Lock()
        self._turn: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.voice = VoiceInput(services.voice) if services.voice is not None else None
        self._asr_lock = asyncio.Lock()
        self._asr_tasks: set[asyncio.Task[None]] = set()
        self._early = EarlyTranscripts(
            self.clock, services.voice.vad.min_silence_ms if services.voice else 0
        )
        self._closing = False
        self._end_reason: str | None = None
        self._dropped_logged = False
        self._enrolment: GuidedEnrolment | None = None  # enrolment by voice under way
        self._shared: tuple[Sharing, ...] = ()  # the household stores a member's turn reads
        self.log = log.bind(session=self.session_id, device=creds.device_id)

    async def flush(self) -> None:
        """Send whatever the state machine queued, in order, even with concurrent callers."""
        async with self._send_lock:
            for frame in self.protocol.data_to_send():
                await self.ws.send(frame)

    async def run(self) -> None:
        started = time.time()
        reason = "closed_by_device"
        metrics.CONNECTIONS.inc()
        self.person = default_person(self.creds.device_id)  # until person_map answers
        self.log = self.log.bind(person=self.person)
        await self._refresh_person()
        if self.voice is not None:
            self.voice.refresh_names(self.person)  # names the last session taught, before it speaks
        self.log.info("session.open", client=self.creds.client_id, version=self.protocol.version)
        try:
            reason = await self._loop()
        except ProtocolError as exc:
            reason = f"protocol_error:{type(exc).__name__}"
            metrics.PROTOCOL_ERRORS.labels(kind=type(exc).__name__).inc()
            self.log.warning("session.protocol_error", error=exc.reason, code=int(exc.close_code))
            await self._close(exc.close_code, exc.reason)
        except ConnectionClosed:
            reason = "connection_lost"
        finally:
            await self._shutdown()
            metrics.CONNECTIONS.dec()
            metrics.SESSIONS_ENDED.labels(reason=reason.split(":")[0]).inc()
            self.log.info(
                "session.closed", reason=reason, utterances=len(self.conversation.transcript)
            )
            await self._fire_end_hooks(started, reason)

    async def _loop(self) -> str:
        while True:
            timeout = max(0.0, self.protocol.next_deadline() - self.clock())
            try:
                async with asyncio.timeout(timeout):
                    message = await self.ws.recv()
            except TimeoutError:
                if self.protocol.check_timeouts(self.clock()):
                    await self._close(CloseCode.IDLE_TIMEOUT, "idle timeout")
                    return "idle_timeout"
                continue
            except ConnectionClosed:
                return self._end_reason or "closed_by_device"
            now = self.clock()
            if isinstance(message, bytes):
                events = self.protocol.receive_binary(message, now)
            else:
                events = self.protocol.receive_text(message, now)
            await self.flush()
            for event in events:
                await self._dispatch(event, now)

    async def _dispatch(self, event: Event, received_at: float) -> None:
        if isinstance(event, HelloReceived):
            if event.features.get("mcp"):
                self._spawn(self._start_mcp())
        elif isinstance(event, AudioReceived):
            await self._on_audio(event.opus, received_at)
        elif isinstance(event, ListenStarted):
            if self.voice is not None:
                await self.voice.start(event.mode)
                self._dropped_logged = False
        elif isinstance(event, ListenStopped):
            if self.voice is not None:
                self._on_listener_events(self.voice.listener.stop(received_at))
        elif isinstance(event, ListenDetected):
            if self.voice is not None:
                # Audio before a detect was the wake phrase itself: never a request.
                wake = is_one_of(event.text, self.settings.wake_words)
                self.voice.listener.detected(wake_word=wake)
                self._early.discard()  # what was heard early was the wake phrase too
            await self._on_user_text(event.text, received_at)
        elif isinstance(event, AbortRequested):
            self.log.info("session.abort", reason=event.reason)
            await self._cancel_turn()
        elif isinstance(event, McpReceived):
            if self.mcp is not None:
                self.mcp.handle(event.payload)
        elif isinstance(event, PingReceived):
            self.protocol.send_pong()
            await self.flush()
        elif isinstance(event, MalformedMessage):
            metrics.PROTOCOL_ERRORS.labels(kind="malformed").inc()
            self.log.warning("session.malformed", reason=event.reason, sample=event.sample)
        elif isinstance(event, IgnoredMessage):
            self.log.info("session.ignored_message", type=event.type)

    # ---- voice --------------------------------------------------------------------------------

    async def _on_audio(self, opus: bytes, received_at: float) -> None:
        if self.voice is None:
            return
        if not self.voice.listening:
            self._drop_audio("not_listening")
            return
        if self.protocol.speaking and self.voice.mode != "realtime":
            # auto/manual devices stop the mic while we talk; anything else is our own echo.
            self._drop_audio("speaking")
            return
        try:
            events = self.voice.audio(opus, received_at)
        except UndecodableAudio as exc:
            self._drop_audio("undecodable", str(exc))
            return
        self._on_listener_events(events)

    def _drop_audio(self, reason: str, detail: str = "") -> None:
        VoiceInput.count_dropped(reason)
        if not self._dropped_logged:  # once per listen cycle, not 16 times a second
            self._dropped_logged = True
            # wake-word audio before listen start is normal firmware behaviour: not a warning
            level = self.log.warning if reason == "undecodable" else self.log.info
            level("voice.audio_dropped", reason=reason, detail=detail)

    def _on_listener_events(self, events: list[ListenerEvent]) -> None:
        for event in events:
            if isinstance(event, SpeechStarted):
                self.protocol.touch(event.at)
                if self.protocol.speaking and self.voice and self.voice.mode == "realtime":
                    metrics.BARGE_INS.inc()
                    self.log.info("voice.barge_in")
                    self._spawn(self._cancel_turn())
            elif isinstance(event, SpeechPaused):
                if not self._closing:
                    self._early.start(event, self._recognise)
            elif isinstance(event, UtteranceEnded):
                if len(self._asr_tasks) >= MAX_PENDING_UTTERANCES:
                    # one device cannot queue unbounded audio for the shared ASR: say so, loudly
                    metrics.UTTERANCES.labels(outcome="asr_backlog").inc()
                    self.log.error("voice.asr_backlog", pending=len(self._asr_tasks),
                                   audio_s=round(event.duration_s, 2))  # fmt: skip
                    continue
                early = self._early.take(event)
                task = asyncio.create_task(self._transcribe(event, self.clock(), early))
                self._asr_tasks.add(task)
                task.add_done_callback(self._asr_tasks.discard)

    async def _recognise(self, pcm: bytes) -> str:
        """ASR with the household's names, words and phrases as the hints."""
        assert self.voice is not None
        return await self.voice.transcribe(
            pcm,
            self.voice.names(self.person),
            self.voice.words(self.person),
            self.voice.phrases(self.person),
        )

    async def _transcribe(
        self, utterance: UtteranceEnded, ended_at: float, early: EarlyTranscript | None
    ) -> None:
        """ASR one utterance, then answer it. Utterances are transcribed in order. After the
        device has gone, the text still goes into the transcript (for the write path).
        ``ended_at``: when the listener decided the utterance was over. ``early``: the
        transcript begun at its last pause (``server.device.early_asr``), if it heard it all."""
        assert self.voice is not None
        who = self._identify(utterance.pcm)  # beside ASR, on the same audio
        async with self._asr_lock:
            started = early.started_at if early is not None else self.clock()
            try:
                heard = await (
                    early.task if early is not None
                    else self._early.hear(utterance.pcm, self._recognise)
                )  # fmt: skip
            except ProviderError as exc:
                metrics.PROVIDER_ERRORS.labels(provider="asr").inc()
                metrics.UTTERANCES.labels(outcome="asr_failed").inc()
                self.log.error(
                    "voice.asr_failed", error=str(exc), audio_s=round(utterance.duration_s, 2)
                )
                if not self._closing:
                    apology = self.settings.asr_apology
                    await self._start_turn(lambda turn: turn.say(apology, started=started))
                return
            text, elapsed = heard.text, heard.done_at - started
            done = max(heard.done_at, ended_at)  # what the turn waited for ASR starts at the end
            metrics.ASR_SECONDS.observe(elapsed)
            self.log.info(
                "voice.transcribed",
                text=text,
                audio_s=round(utterance.duration_s, 2),
                voiced_ms=utterance.voiced_ms,
                asr_ms=round(elapsed * 1000),
                waited_ms=round((done - ended_at) * 1000),  # after the utterance ended
                early=early is not None,  # begun at the pause, before the silence wait ended
                end=utterance.reason.value,
                names=len(self.voice.names(self.person)),  # the household's names as the hint
            )
            if not text:
                metrics.UTTERANCES.labels(outcome="empty").inc()
                if who is not None:
                    who.cancel()
                return
            speaking = await self._speaker(who)
            if self._closing:
                metrics.UTTERANCES.labels(outcome="after_close").inc()
                interrupted = utterance.reason is EndReason.DISCONNECT
                self.conversation.speaking = speaking
                said = Said(role="user", text=text, at=time.time(), interrupted=interrupted)
                self.conversation.add(said)
                return
            metrics.UTTERANCES.labels(outcome="turn").inc()
            marks = {"utterance_end": ended_at, "asr_start": started, "asr_done": done}
            await self._on_user_text(text, utterance.speech_ended_at, marks, speaking,
                                     utterance.pcm)  # fmt: skip

    def _identify(self, pcm: bytes) -> asyncio.Task[Identification | None] | None:
        speakers = self.services.speakers
        if speakers is None:
            return None
        return asyncio.create_task(speakers.identify(self.person, pcm))

    async def _speaker(self, who: asyncio.Task[Identification | None] | None) -> PersonId | None:
        """The member identified (bounded: an identification still running after ASR gets
        ``SPEAKER_WAIT_S`` more, then the utterance is the device's person's)."""
        self._shared = ()
        if who is None:
            return None
        try:
            async with asyncio.timeout(SPEAKER_WAIT_S):
                found = await who
        except TimeoutError:
            self.log.warning("voice.speaker_late", waited_s=SPEAKER_WAIT_S)
            return None
        if found is None:
            return None
        # what the member hears beside their own memory: the household's (server.memory)
        self._shared = found.sharing(self.person, str(self.person))
        return found.member

    async def _drain_voice(self) -> None:
        """The device is gone: transcribe what it was still saying, bounded in time."""
        if self.voice is None:
            return
        self._closing = True
        self._on_listener_events(self.voice.listener.flush(self.clock()))
        self._early.discard()  # flushed audio was taken above; a pause without an end is not
        pending = list(self._asr_tasks)
        if pending:
            _done, late = await asyncio.wait(pending, timeout=self._drain_timeout_s())
            for task in late:
                task.cancel()
                self.log.error("voice.transcript_lost", reason="asr did not finish in time")
        self.voice.close()

    def _drain_timeout_s(self) -> float:
        return 2 * self.settings.tool_call_timeout_s

    # ---- turns --------------------------------------------------------------------------------

    async def _on_user_text(
        self,
        text: str,
        received_at: float,
        marks: dict[str, float] | None = None,
        speaking: PersonId | None = None,
        pcm: bytes = b"",
    ) -> None:
        """Answer what the person said (``pcm``: the utterance, when it was spoken)."""
        if not text:
            return
        self.conversation.speaking = speaking  # what is said and answered now is theirs
        if len(self.conversation.transcript) >= self.services.max_transcript_utterances:
            # kept (the write path gets it), then the session ends: the device reconnects
            self.conversation.add(Said(role="user", text=text, at=time.time()))
            self._end_reason = "transcript_full"
            self.log.warning(
                "session.transcript_full", utterances=len(self.conversation.transcript)
            )
            await self._close(CloseCode.POLICY_VIOLATION, "session too long: reconnect")
            return
        if is_exit_phrase(text, self.settings.exit_phrases):
            metrics.TURNS.labels(kind="exit").inc()
            await self._cancel_turn(reply_stop=False)
            self._turn = asyncio.create_task(self._say_goodbye(text, received_at))
            return
        await self._refresh_person()
        if await self._enrolment_turn(text, pcm, received_at):
            return
        kind = "text"
        if is_one_of(text, self.settings.wake_words):
            kind, text = "wake_word", self.settings.greeting
        metrics.TURNS.labels(kind=kind).inc()
        await self._start_turn(lambda turn: turn.run(text, started=received_at, marks=marks))

    # ---- enrolment by voice --------------------------------------------------------------------

    async def _enrolment_turn(self, text: str, pcm: bytes, received_at: float) -> bool:
        """Whether ``text`` is part of an enrolment by voice (``server.device.enrolment``):
        the request that begins one, or an answer to it. Its exchange is spoken like any reply
        but kept out of the conversation: neither the model nor the write path sees the
        sentences read aloud."""
        flow = self._enrolment
        if flow is not None and (flow.done or flow.expired(received_at)):
            flow = self._enrolment = None
        step: Say | Enrol | None
        if flow is None:
            request = enrolment_request(text)
            if request is None:
                return False
            flow = self._enrolment = GuidedEnrolment(request, received_at)
            step = flow.start() if self.services.speakers is not None else flow.unavailable()
            self.log.info("voice.enrol_started", speaker=request.speaker)
        else:
            step = flow.heard(text, pcm, received_at)
            if step is None:
                return True
        metrics.TURNS.labels(kind="enrolment").inc()
        reply = self._enrolment_reply(flow, step, text, received_at)
        await self._start_turn(reply, aside=True)
        return True

    def _enrolment_reply(
        self, flow: GuidedEnrolment, step: Say | Enrol, heard: str, started: float
    ) -> Callable[[Turn], Awaitable[None]]:
        async def reply(turn: Turn) -> None:
            said = step
            if isinstance(said, Enrol):
                assert self.services.speakers is not None
                try:
                    said = await run_enrolment(
                        self.services.speakers, self.person, flow, said, self.log
                    )
                finally:
                    if flow.stage is Stage.CHECKING and self._enrolment is flow:
                        self._enrolment = None  # cancelled while checking: abandoned
            if said.done and self._enrolment is flow:
                self._enrolment = None
            await turn.say(said.text, heard=heard, started=started)

        return reply

    async def _say_goodbye(self, heard: str, received_at: float) -> None:
        turn = self._new_turn()
        with contextlib.suppress(ConnectionClosed):
            await turn.say(self.settings.goodbye, heard=heard, started=received_at)
        self._end_reason = "exit_phrase"
        self.log.info("session.exit_phrase", text=heard)
        await self._close(CloseCode.NORMAL, "goodbye")

    async def _start_turn(
        self, action: Callable[[Turn], Awaitable[None]], aside: bool = False
    ) -> None:
        """``aside``: the turn's exchange stays out of the conversation and the transcript."""
        await self._cancel_turn(reply_stop=False)
        turn = self._new_turn(Conversation(0) if aside else None)
        self._turn = asyncio.create_task(self._run_turn(action(turn)))

    def _new_turn(self, conversation: Conversation | None = None) -> Turn:
        return Turn(
            self.services.turn,
            self.protocol,
            self.flush,
            conversation if conversation is not None else self.conversation,
            self.encoder,
            self.mcp,
            ToolContext(
                self._speaking_person(),
                self.creds.device_id,
                self.session_id,
                household=self._shared if self.conversation.speaking else (),
            ),
        )

    def _speaking_person(self) -> PersonId:
        """Whose memory the turn recalls: the member identified by voice, else the device's."""
        return PersonId(self.conversation.speaking or self.person)

    async def _run_turn(self, work: Awaitable[None]) -> None:
        try:
            await work
        except ConnectionClosed:
            self.log.info("turn.device_gone")
        except Exception:  # a turn must never take the session down with it
            self.log.exception("turn.crashed")
            with contextlib.suppress(ConnectionClosed):
                if self.protocol.speaking:
                    self.protocol.send_tts_stop()
                    await self.flush()

    async def _cancel_turn(self, reply_stop: bool = True) -> None:
        turn, self._turn = self._turn, None
        if turn is not None and not turn.done():
            turn.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await turn
        if reply_stop and (self.protocol.speaking or turn is not None):
            self.protocol.send_tts_stop()
            await self.flush()

    async def _start_mcp(self) -> None:
        async def send(payload: dict[str, object]) -> None:
            self.protocol.send_mcp(payload)
            await self.flush()

        self.mcp = DeviceMcpClient(
            send,
            timeout_s=self.settings.mcp_timeout_s,
            call_timeout_s=self.settings.tool_call_timeout_s,
        )
        try:
            url = self.services.vision_url.replace("{host}", self._host())
            await self.mcp.start(url, self.services.vision_token(self.creds))
        except McpCallError as exc:
            self.log.warning("mcp.handshake_failed", error=str(exc))

    def _host(self) -> str:
        """The host name the device used to reach us (without the port)."""
        request = getattr(self.ws, "request", None)
        raw = (request.headers.get("Host", "") if request is not None else "").strip()
        if raw.startswith("["):  # [::1]:8000
            host = raw[: raw.find("]") + 1]
        else:
            host = raw.rsplit(":", 1)[0] if raw.count(":") == 1 else raw
        return host if _HOST.fullmatch(host) else "127.0.0.1"

    def _spawn(self, coro: Awaitable[None]) -> None:
        async def guarded() -> None:
            with contextlib.suppress(ConnectionClosed):
                await coro

        task = asyncio.create_task(guarded())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def close(self, code: CloseCode, reason: str, end_reason: str) -> None:
        """Close from outside (a revoked device): the session ends as usual, transcript kept."""
        self._end_reason = end_reason
        self.log.info("session.closed_by_server", reason=reason)
        await self._close(code, reason)

    async def _close(self, code: CloseCode, reason: str) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.ws.close(int(code), reason)

    async def _shutdown(self) -> None:
        await self._drain_voice()
        self.protocol.close()
        if self.mcp is not None:
            self.mcp.cancel_all()
        tasks = [t for t in (self._turn, *self._background) if t is not None and not t.done()]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await task

    async def _refresh_person(self) -> None:
        """Read person_map again (at connect, before every turn, at the end): an admin's remap
        applies to open sessions at their next turn, and a session that connected while Redis
        was down reaches its owner once Redis answers. Redis down: the last known person stays
        (the device's own ``device-…`` person if none was ever known), logged."""
        try:
            person = await self.services.resolve_person(self.creds.device_id)
        except (RedisError, OSError) as exc:
            self.log.error("person_map.unavailable", error=str(exc), keeping=self.person)
            return
        if person != self.person:
            if self.person != default_person(self.creds.device_id):
                self.log.info("session.person_changed", old=self.person, new=person)
            self.person = person
            self.log = self.log.bind(person=person)

    async def _fire_end_hooks(self, started: float, reason: str) -> None:
        await self._refresh_person()  # the transcript goes to whoever person_map says now
        record = SessionRecord(
            session_id=self.session_id,
            device_id=self.creds.device_id,
            client_id=self.creds.client_id,
            person=self.person,
            started_at=started,
            ended_at=time.time(),
            end_reason=reason,
            transcript=list(self.conversation.transcript),
        )
        for part in by_speaker(record):
            for hook in self.services.end_hooks:
                try:
                    await hook.session_ended(part)
                except Exception:  # one failing hook must not stop the others
                    self.log.exception("session.end_hook_failed", hook=type(hook).__name__)


def by_speaker(record: SessionRecord) -> list[SessionRecord]:
    """The session as the write path takes it: what each identified member said (and was
    answered) goes to their own person as ``<session>~<member>``; the rest stays the device's
    person's under the session's own id. No member identified: the record as it is."""
    parts = by_person(record.transcript)
    if set(parts) <= {None}:
        return [record]
    return [
        replace(
            record,
            session_id=record.session_id if member is None else f"{record.session_id}~{member}",
            person=member or record.person,
            transcript=said,
        )
        for member, said in parts.items()
    ]
