"""Every Prometheus metric Hearth exports, in one place."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

_LATENCY_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10)

CONNECTIONS = Gauge("hearth_device_connections", "Open device WebSocket sessions")
HANDSHAKES_REFUSED = Counter(
    "hearth_device_handshakes_refused_total", "Device handshakes refused", ["reason"]
)
PROTOCOL_ERRORS = Counter(
    "hearth_device_protocol_errors_total", "Protocol violations and malformed messages", ["kind"]
)
TURNS = Counter("hearth_turns_total", "Conversation turns started", ["kind"])
FIRST_AUDIO = Histogram(
    "hearth_turn_first_audio_seconds",
    "Text received → first Opus frame sent (TTFA)",
    buckets=_LATENCY_BUCKETS,
)
SERVER_ADDED = Histogram(
    "hearth_turn_server_added_seconds",
    "TTFA minus time spent waiting on LLM and TTS providers",
    buckets=_LATENCY_BUCKETS,
)
PROVIDER_ERRORS = Counter("hearth_provider_errors_total", "Provider failures", ["provider"])
SESSIONS_ENDED = Counter("hearth_sessions_ended_total", "Device sessions ended", ["reason"])
UTTERANCES = Counter(
    "hearth_voice_utterances_total",
    "Spoken utterances cut by the VAD, by outcome (turn, empty, asr_failed, exit, after_close)",
    ["outcome"],
)
AUDIO_DROPPED = Counter(
    "hearth_voice_frames_dropped_total",
    "Uplink audio frames not used, by reason (not_listening, speaking, undecodable, no_voice)",
    ["reason"],
)
BARGE_INS = Counter("hearth_voice_barge_ins_total", "Replies interrupted by speech (realtime)")
ASR_SECONDS = Histogram(
    "hearth_asr_seconds", "Time to transcribe one utterance", buckets=_LATENCY_BUCKETS
)
ASR_EARLY = Counter(
    "hearth_asr_early_total",
    "Transcripts begun at a pause, by outcome (used: the utterance ended there; stale: the "
    "speaker went on)",
    ["outcome"],
)
CHILD_UP = Gauge(
    "hearth_child_up", "1 while a child process hearth up owns serves, else 0", ["name"]
)
CHILD_RESTARTS = Counter(
    "hearth_child_restarts_total", "Restarts of a child process hearth up owns", ["name"]
)
TURN_FAILURES = Counter(
    "hearth_turn_failures_total",
    "Turns answered with a fixed sentence instead of the model, by cause",
    ["cause"],
)
PHOTOS_NOT_KEPT = Counter(
    "hearth_photos_not_kept_total", "Photos answered but not kept as image memories (see log)"
)
MEMORY_UNAVAILABLE = Counter(
    "hearth_turn_memory_unavailable_total",
    "Turns answered without memory because the read path failed (the store down; see log)",
)
WRITE_PAUSES = Counter(
    "hearth_write_model_pauses_total",
    "Times the write path's local model was paused because a device turn started",
)
CLAIMS_REPLACED = Counter(
    "hearth_turn_claimed_actions_replaced_total",
    "Reply sentences that claimed an action no tool took, replaced before TTS",
)
INVENTED_FACTS_REPLACED = Counter(
    "hearth_turn_invented_facts_replaced_total",
    "Reply sentences stating a household fact memory does not hold, replaced before TTS",
)
UNSAFE_RECOMMENDATIONS_DROPPED = Counter(
    "hearth_turn_unsafe_recommendations_dropped_total",
    "Reply sentences recommending what a constraint Hearth had just said forbids, not spoken",
)
TAGS_PENDING = Gauge(
    "hearth_memory_tags_pending",
    "Memories waiting for the write worker's tags, all persons (read from Redis at each scrape)",
)
CUES_PENDING = Gauge(
    "hearth_memory_cues_pending",
    "Memories waiting for their 'when it matters' cues, all persons (read at each scrape)",
)
