"""Hearth as an MCP server (mcp 2.x, streamable HTTP), two endpoints on two ports:

- **agent** (coding agents): ``memory_search``, ``memory_add``, ``check_safety``;
- **device**: ``check_safety`` only (devices already write memory through the write path).

Identity comes from the bearer token and nothing else: every token is bound to one person and a
source name when it is minted (``hearth mcp-token create``), tools take no person argument, and
each call reads and writes only the token's person — whoever else shares the process (the hole
the original left open: one process identity for every caller). No token → 401; a device token
on the agent endpoint → 403 (scope); a browser ``Origin`` not configured → 403.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import structlog
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from redis.asyncio import Redis
from starlette.applications import Starlette

from config.settings import HearthSettings
from memory.identity import ME, person_id, speaker_name
from memory.registry import Speakers
from memory.schema import PersonId
from memory.writes import Duplicate, MemoryWriter, NoTagging
from server.mcp.tokens import Endpoint, McpIdentity, McpTokens
from server.memory.engine import MemoryEngine
from server.memory.safety import DESCRIPTION as SAFETY_DESCRIPTION
from server.memory.safety import check_safety_tool
from server.tools import ToolContext
from workers.tag_requests import ArqTagRequests

log = structlog.get_logger(__name__)
SEARCH_DESCRIPTION = (
    "Search this person's household memory (the read path a device turn uses: safety "
    "constraints first, then related memories)."
)
ADD_DESCRIPTION = (
    "Remember something for this person when they explicitly ask (remember that...). "
    "A memory close in meaning to a stored one is not stored twice."
)


class TokenVerifier:
    """The MCP SDK's bearer check: a known token becomes an AccessToken whose single scope is its
    endpoint and whose claims carry the person and source."""

    def __init__(self, tokens: McpTokens) -> None:
        self.tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        identity = await self.tokens.identity(token)
        if identity is None:
            return None
        return AccessToken(
            token=token,
            client_id=identity.name,
            scopes=[identity.endpoint],
            claims={"person": identity.person, "source": identity.source},
        )


def caller() -> McpIdentity:
    """The identity of the request being served (set by the SDK's bearer middleware)."""
    access = get_access_token()
    if access is None or not access.claims:
        raise PermissionError("no authenticated caller")
    endpoint: Endpoint = "agent" if "agent" in access.scopes else "device"
    person = PersonId(str(access.claims["person"]))  # from the token record (McpTokens)
    return McpIdentity(access.client_id, person, str(access.claims["source"]), endpoint)


class AgentMemory:
    """The tool bodies, for one caller at a time (``caller()``), on the shared engine."""

    def __init__(
        self, memory: MemoryEngine, redis: Redis | None, duplicate_threshold: float
    ) -> None:
        self.memory = memory
        self.redis = redis
        # stdio without Redis: no worker to ask, tags keep their safe defaults
        tags = NoTagging() if redis is None else ArqTagRequests(redis)
        self.writer = MemoryWriter(memory.embedder, memory.store, redis, tags, duplicate_threshold)
        self._safety = check_safety_tool(memory.embedder, memory.store)

    async def search(self, who: McpIdentity, query: str, limit: int) -> dict[str, Any]:
        recall = await self.memory.read_path.recall(who.person, query[:500])
        # the caller's limit, not the device prompt's budget, says how many it gets
        found = [*recall.safety, *recall.related, *recall.beyond][: max(1, min(limit, 20))]
        log.info("mcp.search", person=who.person, client=who.name, query=query, hits=len(found))
        return {"memories": [r.as_json() for r in found], "prompt_block": recall.block}

    async def add(self, who: McpIdentity, text: str, speaker: str | None) -> dict[str, Any]:
        """An explicit "remember this": the one write (memory.writes) — the caller's source, a
        duplicate check on meaning, the speaker kept; tags (cls, decay, subject) are filled by
        the tagging job it queues."""
        text = " ".join(text.split())[:2000]
        if not text:
            raise ValueError("text is empty")
        if speaker is not None:
            speaker = await self._speaker(who, speaker)
        written = await self.writer.remember(who.person, text, source=who.source, speaker=speaker)
        if isinstance(written, Duplicate):
            existing = written.existing
            return {"status": "duplicate", "duplicate_of": existing.key,
                    "text": existing.text, "similarity": round(written.score, 3)}  # fmt: skip
        log.info("mcp.add", person=who.person, client=who.name, source=who.source, text=text)
        memory = written.memory
        tags = "pending (tagging job queued)" if self.redis is not None else "defaults (no worker)"
        return {"status": "stored", "id": memory.key, "tags": tags}

    async def _speaker(self, who: McpIdentity, raw: str) -> str:
        """The API's rules for who said it: a valid name, ``me`` for the assistant, otherwise a
        speaker registered for this person (``hearth persons speaker`` / the API)."""
        name = speaker_name(raw)  # IdentityError (a ValueError) carries the rule
        if name == ME or self.redis is None:
            return name
        if not await Speakers(self.redis).registered(who.person, name):
            raise ValueError(f"speaker '{name}' is not registered for this person")
        return name

    async def check_safety(self, who: McpIdentity, topic: str) -> str:
        context = ToolContext(who.person, f"mcp:{who.name}", f"mcp-{uuid.uuid4()}")
        return await self._safety.handler({"topic": topic}, context)


def _security(hosts: list[str], origins: list[str]) -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


INSTRUCTIONS = "Household memory of the person this connection belongs to."
WhoCalls = Callable[[], McpIdentity]


def register_tools(
    server: MCPServer[Any], tools: AgentMemory, who: WhoCalls, endpoint: Endpoint
) -> None:
    """The endpoint's tools; ``who`` names the caller of the request being served."""

    @server.tool(description=SAFETY_DESCRIPTION)
    async def check_safety(topic: str) -> str:
        return await tools.check_safety(who(), topic)

    if endpoint != "agent":
        return

    @server.tool(description=SEARCH_DESCRIPTION)
    async def memory_search(query: str, limit: int = 6) -> dict[str, Any]:
        return await tools.search(who(), query, limit)

    @server.tool(description=ADD_DESCRIPTION)
    async def memory_add(text: str, speaker: str | None = None) -> dict[str, Any]:
        try:
            return await tools.add(who(), text, speaker)
        except ValueError as exc:  # the caller's mistake: say which rule, as the API does
            raise ToolError(str(exc)) from exc


def build_endpoint(
    endpoint: Endpoint, tools: AgentMemory, verifier: TokenVerifier, public_url: str,
    hosts: list[str], origins: list[str],
) -> Starlette:  # fmt: skip
    """One MCP endpoint as an ASGI app (``/mcp``), bearer-protected with its own scope."""
    auth = AuthSettings(
        issuer_url=public_url,
        resource_server_url=f"{public_url}/mcp",
        required_scopes=[endpoint],
        validate_token_resource=False,  # tokens are ours, bound to an endpoint by their scope
    )
    server: MCPServer[Any] = MCPServer(
        name=f"hearth-{endpoint}",
        instructions=INSTRUCTIONS,
        token_verifier=verifier,
        auth=auth,
    )
    register_tools(server, tools, caller, endpoint)
    return server.streamable_http_app(
        transport_security=_security(hosts, origins), stateless_http=True
    )


def build_endpoints(
    memory: MemoryEngine, redis: Redis, host: str, ports: dict[Endpoint, int],
    origins: list[str], duplicate_threshold: float,
) -> dict[Endpoint, Starlette]:  # fmt: skip
    """Both endpoints, sharing one engine and one token table."""
    verifier = TokenVerifier(McpTokens(redis))
    tools = AgentMemory(memory, redis, duplicate_threshold)
    apps: dict[Endpoint, Starlette] = {}
    for endpoint, port in ports.items():
        hosts = [f"127.0.0.1:{port}", f"localhost:{port}", f"{host}:{port}"]
        url = f"http://{host}:{port}"
        apps[endpoint] = build_endpoint(endpoint, tools, verifier, url, hosts, origins)
    return apps


async def serve_stdio(settings: HearthSettings, person: str) -> None:
    """The agent tools over stdio for one local agent; the person is fixed by configuration."""
    from server.memory.engine import build_memory

    memory = build_memory(settings)
    url = _redis_url(settings)
    redis = Redis.from_url(url) if url else None
    try:
        tools = AgentMemory(memory, redis, settings.api.duplicate_threshold)
        identity = McpIdentity("stdio", person_id(person), settings.mcp.stdio_source, "agent")
        server: MCPServer[Any] = MCPServer(name="hearth-agent", instructions=INSTRUCTIONS)
        register_tools(server, tools, lambda: identity, "agent")
        await server.run_stdio_async()
    finally:
        if redis is not None:
            await redis.aclose()
        memory.close()


def _redis_url(settings: HearthSettings) -> str | None:
    from config.run_files import redis_url_file

    if settings.redis.url:
        return settings.redis.url
    path = redis_url_file(settings.data_dir)
    return path.read_text().strip() if path.is_file() else None
