"""Every Redis key Hearth uses, in one place (server, workers and CLI share them)."""

from __future__ import annotations

PREFIX = "hearth:"
QUEUE = "hearth:queue"  # the arq queue of write-path and tagging jobs
# hash "device_id|client_id" -> json {client_id, approved_at}; a field that is a bare device id
# is an approval from before pairs (it approves the client id in its record only)
APPROVED_DEVICES = PREFIX + "devices:approved"
DEVICES_REVOKED = PREFIX + "devices:revoked"  # pub/sub: json {device, client|null} per revoke
PERSON_MAP = PREFIX + "person_map"  # hash device_id -> person (read at every connection)
ACTIVATION_TTL_S = 24 * 3600


def activation_code(code: str) -> str:
    """code -> device_id|client_id, while an activation is pending."""
    return f"{PREFIX}activation:code:{code}"


def activation_device(pair: str) -> str:
    """device_id|client_id -> its pending code (one pending code per pair)."""
    return f"{PREFIX}activation:device:{pair}"


def transcripts(person: str) -> str:
    """Archive of finished session transcripts of one person (a capped list, newest first)."""
    return f"{PREFIX}transcripts:{person}"


# ---- memory HTTP API -------------------------------------------------------------------------
STORES = PREFIX + "api:stores"  # hash store id (lower case) -> json {id as created, created_at}
API_KEYS = PREFIX + "api:keys"  # hash sha256(key) -> json {name, stores, created_at}


def speakers(store: str) -> str:
    """Registered speakers of one store: hash name -> created_at (ISO)."""
    return f"{PREFIX}api:speakers:{store}"


def idempotency(scope: str, key: str) -> str:
    """One Idempotency-Key of one API key: json {state, fingerprint, ...}, kept 24 h."""
    return f"{PREFIX}api:idem:{scope}:{key}"


def person_lock(person: str) -> str:
    """Held while one person's memories are checked for duplicates and written — milliseconds
    (API, MCP and console writes, the write path's apply and tag patch): across every process,
    two writers never interleave on one person."""
    return f"{PREFIX}lock:person:{person}"


def merge_lock(person: str) -> str:
    """Held by a write job for one person from its merge to its tags (minutes of LLM calls):
    two jobs for one person never merge concurrently — and other writers never wait for it."""
    return f"{PREFIX}lock:merge:{person}"


# ---- write path ------------------------------------------------------------------------------
PERSON_SPEAKERS = PREFIX + "person_speakers"  # hash person -> the speaker name of its user
FAILED_JOBS = PREFIX + "jobs:failed"  # hash job id -> json {record, error, kind, tries, at}
CHECKPOINT_TTL_S = 7 * 24 * 3600


def write_checkpoint(session_id: str) -> str:
    """Stage outputs of one session's write job (facts, plan, applied, tags, done), so a
    re-delivered job repeats no LLM call and stores nothing twice."""
    return f"{PREFIX}write:{session_id}"


def retag(person: str) -> str:
    """Memories of a person waiting for tags (stored by the API, MCP or console, or revised
    since tagged): tagged by the person's next write job or tag job."""
    return f"{PREFIX}retag:{person}"


RETAG_PATTERN = f"{PREFIX}retag:*"  # every person's retag set (the pending-tags gauge)


def recue(person: str) -> str:
    """Memories of a person waiting for their "when it matters" cues (tagged or revised since
    their cues were made): cued by the person's next write, tag or cue job."""
    return f"{PREFIX}recue:{person}"


RECUE_PATTERN = f"{PREFIX}recue:*"  # every person's cue set (the pending-cues gauge)


def conflicts(person: str) -> str:
    """What source priority decided for a person (a capped list, newest first)."""
    return f"{PREFIX}conflicts:{person}"


# ---- turn traces -----------------------------------------------------------------------------
def turn_traces(session_id: str) -> str:
    """What each turn of one session recalled, called and answered (a capped list, oldest
    first), for operators and the end-to-end bench. Expires after ``session.trace_ttl_s``."""
    return f"{PREFIX}traces:{session_id}"


# ---- MCP endpoints ---------------------------------------------------------------------------
MCP_TOKENS = PREFIX + "mcp:tokens"  # hash sha256(token) -> json {name, person, source, endpoint}


# ---- console ---------------------------------------------------------------------------------
CONSOLE_USERS = (
    PREFIX + "console:users"
)  # hash name -> json {kdf params, salt, hash, person, admin}


def console_login_failures(name: str) -> str:
    """Login attempts for one account name, counted before the password is hashed (expires
    with the rate-limit window; a success clears it)."""
    return f"{PREFIX}console:fail:{name}"


def console_signed_out(session_csrf: str) -> str:
    """A console session signed out before its cookie expires (kept until then)."""
    return f"{PREFIX}console:signed-out:{session_csrf}"


def console_login_address(address: str) -> str:
    """Login attempts from one client address, counted before hashing (expires with the window)."""
    return f"{PREFIX}console:fail-from:{address}"


def voices(household: str) -> str:
    """Voiceprints of one household's members: hash member person -> json voice record."""
    return f"{PREFIX}voices:{household}"
