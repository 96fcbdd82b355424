"""Console accounts: names, scrypt password hashes, the person each account sees, admin flag;
and login rate limiting. Stored in Redis (``config.keys.CONSOLE_USERS``)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import orjson
from redis.asyncio import Redis

from config import keys
from memory.identity import IdentityError, person_id
from memory.schema import PersonId

# scrypt: memory-hard; N=2**14, r=8 is ~16 MB and ~50 ms per check on this machine class.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**14, 8, 1
MAX_FAILURES = 5  # attempts per account name within the window (a success clears them)
MAX_FROM_ADDRESS = 20  # attempts per client address within the window, whatever the names
FAILURE_WINDOW_S = 15 * 60
# scrypt runs off the event loop (which also serves devices) on a small pool; at most this many
# checks wait or run at once, further logins are refused as busy instead of queueing
HASH_THREADS = 2
HASHES_IN_FLIGHT = 8
_HASHING = ThreadPoolExecutor(HASH_THREADS, thread_name_prefix="scrypt")
MIN_PASSWORD = 10


@dataclass(frozen=True, slots=True)
class Account:
    name: str
    person: PersonId
    admin: bool


def hash_password(password: str, salt: bytes | None = None) -> dict[str, object]:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P,
                            dklen=32)  # fmt: skip
    return {"kdf": "scrypt", "n": SCRYPT_N, "r": SCRYPT_R, "p": SCRYPT_P, "salt": salt.hex(),
            "hash": digest.hex()}  # fmt: skip


def password_matches(password: str, record: dict[str, object]) -> bool:
    salt = bytes.fromhex(str(record["salt"]))
    digest = hashlib.scrypt(password.encode(), salt=salt, n=int(str(record["n"])),
                            r=int(str(record["r"])), p=int(str(record["p"])), dklen=32)  # fmt: skip
    return hmac.compare_digest(digest.hex(), str(record["hash"]))


class AccountError(Exception):
    pass


class RateLimited(Exception):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"too many failed logins; retry in {retry_after_s} s")
        self.retry_after_s = retry_after_s


class Accounts:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._in_flight = asyncio.Semaphore(HASHES_IN_FLIGHT)

    async def create(self, name: str, password: str, person: str, admin: bool) -> Account:
        name = name.strip()
        if not name or not person.strip():
            raise AccountError("name and person are required")
        if len(password) < MIN_PASSWORD:
            raise AccountError(f"the password needs at least {MIN_PASSWORD} characters")
        try:
            who = person_id(person.strip())
        except IdentityError as exc:
            raise AccountError(exc.message) from exc
        record = {**hash_password(password), "person": who, "admin": admin}
        await self.redis.hset(keys.CONSOLE_USERS, name, orjson.dumps(record).decode())  # type: ignore[misc]
        return Account(name, who, admin)

    async def get(self, name: str) -> Account | None:
        raw = await self.redis.hget(keys.CONSOLE_USERS, name)  # type: ignore[misc]
        if raw is None:
            return None
        record = orjson.loads(raw)
        return Account(name, PersonId(record["person"]), bool(record["admin"]))

    async def login(self, name: str, password: str, address: str = "") -> Account | None:
        """The account when the password matches. Every attempt is counted — atomically, before
        the password is hashed — per name (known or not) and per client address; past
        MAX_FAILURES / MAX_FROM_ADDRESS in the window it raises RateLimited without hashing, so
        concurrent guesses cannot slip past the count. A success clears the name's count."""
        by_name, by_address = keys.console_login_failures(name), keys.console_login_address(address)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.incr(by_name)
            pipe.expire(by_name, FAILURE_WINDOW_S, nx=True)
            pipe.incr(by_address)
            pipe.expire(by_address, FAILURE_WINDOW_S, nx=True)
            name_count, _, address_count, _ = await pipe.execute()
        if name_count > MAX_FAILURES or address_count > MAX_FROM_ADDRESS:
            key = by_name if name_count > MAX_FAILURES else by_address
            raise RateLimited(max(1, int(await self.redis.ttl(key))))
        raw = await self.redis.hget(keys.CONSOLE_USERS, name)  # type: ignore[misc]
        record = orjson.loads(raw) if raw else None
        # Hash even for unknown names, so timing does not tell which names exist.
        ok = await self._matches(password, record or _DUMMY)
        if record is None or not ok:
            return None
        await self.redis.delete(by_name)
        await self.redis.decr(by_address)
        return Account(name, PersonId(record["person"]), bool(record["admin"]))

    async def _matches(self, password: str, record: dict[str, object]) -> bool:
        """scrypt on the hashing pool; more than HASHES_IN_FLIGHT at once → busy (RateLimited)."""
        if self._in_flight.locked():
            raise RateLimited(1)
        async with self._in_flight:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(_HASHING, password_matches, password, record)


_DUMMY = hash_password("not-a-real-password", salt=b"\0" * 16)


def now() -> float:
    return time.time()
