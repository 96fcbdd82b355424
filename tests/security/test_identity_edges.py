"""Issue 20, low: ids and credentials at the edges — a trailing newline is not a person id, MCP
tokens fold case (no phantom person), an API-key revoke needs a real prefix, and odd digits in a
device token are a 401 reason, not a 500."""

from __future__ import annotations

import pytest
from redis.asyncio import Redis

from memory.identity import IdentityError, person_id
from memory.registry import ApiKeys
from server.auth import AuthError, AuthFailure, DeviceCredentials, TokenAuthority
from server.mcp.tokens import McpTokens


def test_a_trailing_newline_is_not_a_person_id() -> None:
    with pytest.raises(IdentityError):
        person_id("zhang\n")
    assert person_id("Zhang") == "zhang"


async def test_mcp_tokens_fold_the_persons_case(redis: Redis) -> None:
    tokens = McpTokens(redis)
    token = await tokens.create("agent", "Zhang", "mcp", "agent")
    identity = await tokens.identity(token)
    assert identity is not None and identity.person == "zhang"
    with pytest.raises(IdentityError):
        await tokens.create("agent", "zhang li", "mcp", "agent")


async def test_an_api_key_revoke_needs_a_prefix_that_names_one_key(redis: Redis) -> None:
    api_keys = ApiKeys(redis)
    _, key = await api_keys.create("kept", ["*"])
    with pytest.raises(ValueError, match="at least"):
        await api_keys.revoke("")
    assert [k.id for k in await api_keys.all() if k.id == key.id] == [key.id]  # still there
    assert await api_keys.revoke(key.id[:8])
    assert [k for k in await api_keys.all() if k.id == key.id] == []


@pytest.mark.parametrize("token", ["sig.²³", "sig.١٢٣", "sïg.123"])
def test_odd_characters_in_a_device_token_are_a_reason_not_a_crash(token: str) -> None:
    authority = TokenAuthority(b"k" * 32, 86400)
    creds = DeviceCredentials("aa:bb:cc:dd:ee:ff", "c", token, 1)  # type: ignore[arg-type]
    with pytest.raises(AuthError) as refused:
        authority.verify(creds, 1_800_000_000)
    assert refused.value.failure is AuthFailure.MALFORMED_TOKEN
