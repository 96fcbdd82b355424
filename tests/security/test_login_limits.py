"""Issue 20, high: the console's login limit holds under concurrency, for unknown names, per
client address, and scrypt never runs on the event loop (real Redis)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from redis.asyncio import Redis

from config import keys
from server.console import accounts as accounts_module
from server.console.accounts import (
    HASHES_IN_FLIGHT,
    MAX_FAILURES,
    MAX_FROM_ADDRESS,
    Accounts,
    RateLimited,
)
from tests.support.waiting import wait_until

PASSWORD = "correct horse battery staple"


@pytest.fixture
async def accounts(redis: Redis) -> Accounts:
    for pattern in ("console:fail:*", "console:fail-from:*"):
        async for key in redis.scan_iter(keys.PREFIX + pattern):
            await redis.delete(key)
    made = Accounts(redis)
    await made.create("zhang", PASSWORD, "zhang", admin=False)
    return made


@pytest.fixture
def counted_hashes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every password check, by the thread it ran on."""
    threads: list[str] = []
    real = accounts_module.password_matches

    def recording(password: str, record: dict[str, object]) -> bool:
        threads.append(threading.current_thread().name)
        return real(password, record)

    monkeypatch.setattr(accounts_module, "password_matches", recording)
    return threads


async def _try(accounts: Accounts, name: str, password: str, address: str) -> str:
    try:
        found = await accounts.login(name, password, address)
    except RateLimited:
        return "limited"
    return "ok" if found else "wrong"


async def test_forty_concurrent_guesses_get_five_password_checks(
    accounts: Accounts, counted_hashes: list[str]
) -> None:
    # spread over addresses so only the per-name limit applies
    tries = [_try(accounts, "zhang", f"guess-{n}", f"10.0.0.{n}") for n in range(40)]
    outcomes = await asyncio.gather(*tries)
    assert outcomes.count("wrong") == MAX_FAILURES
    assert outcomes.count("limited") == 40 - MAX_FAILURES
    assert len(counted_hashes) == MAX_FAILURES
    assert all(name.startswith("scrypt") for name in counted_hashes)  # never on the loop


async def test_unknown_names_from_one_address_are_limited_too(
    accounts: Accounts, counted_hashes: list[str]
) -> None:
    outcomes = [await _try(accounts, f"nobody-{n}", "x", "10.9.9.9") for n in range(30)]
    assert outcomes[:MAX_FROM_ADDRESS] == ["wrong"] * MAX_FROM_ADDRESS
    assert set(outcomes[MAX_FROM_ADDRESS:]) == {"limited"}
    assert len(counted_hashes) == MAX_FROM_ADDRESS
    # the owner, from another address, still signs in
    assert await _try(accounts, "zhang", PASSWORD, "192.168.1.20") == "ok"


async def test_a_success_clears_the_names_count(accounts: Accounts) -> None:
    for n in range(MAX_FAILURES - 1):
        assert await _try(accounts, "zhang", f"wrong-{n}", "10.1.1.1") == "wrong"
    assert await _try(accounts, "zhang", PASSWORD, "10.1.1.1") == "ok"
    assert await _try(accounts, "zhang", "wrong-again", "10.1.1.1") == "wrong"  # not limited


async def test_a_burst_beyond_the_hashing_pool_is_refused_not_queued(
    accounts: Accounts, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()

    def slow(password: str, record: dict[str, object]) -> bool:
        release.wait(10)
        return False

    monkeypatch.setattr(accounts_module, "password_matches", slow)
    held = [
        asyncio.create_task(_try(accounts, f"name-{n}", "x", f"10.2.0.{n}"))
        for n in range(HASHES_IN_FLIGHT)
    ]
    await wait_until(lambda: accounts._in_flight.locked(), within_s=5)  # all places taken
    assert await _try(accounts, "late", "x", "10.3.0.1") == "limited"
    release.set()
    assert set(await asyncio.gather(*held)) == {"wrong"}
