"""The device path: a socket's session (sans-I/O protocol in ``server.protocol``, thin asyncio
glue here), listening and voice input, one turn (LLM → sentences → TTS → paced Opus), the
tools a turn may call, its traces, and the session-end hook that hands the transcript over."""
