"""A household's voices: the members enrolled, removing one, and enrolling one from three WAV
sentences (uploaded, or recorded in the browser and sent as WAV by ``record.js``) through
``server.voices.enrol.enrol_member``, as the command line and the admin API do.

An account manages the voices of its own household (its person); an admin those of any
household, and may name the member's person id. Anyone else's members get ids derived from the
name they are enrolled under (``server.voices.members``), scoped to the household: an account
cannot enrol its voice as another household's person and so reach that person's memories.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from urllib.parse import quote

import structlog
from starlette.datastructures import FormData, UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response

from memory.identity import IdentityError, person_id
from server.console.accounts import Account
from server.console.sessions import Session
from server.console.views import context, guarded_form, page, viewer, when
from server.persons import PersonMap
from server.voices.checks import Refusal
from server.voices.embedder import shared_embedder
from server.voices.enrol import READ_ALOUD, enrol_member
from server.voices.members import member_for
from server.voices.store import HouseholdFull, Voice, VoiceStore
from server.voices.wav import RATE, NotAWav, wav_to_pcm16k
from server.voices.weights import WeightsError

log = structlog.get_logger(__name__)
RECORDER = Path(__file__).resolve().parents[1] / "static" / "record.js"
MAX_SENTENCE_S = 30  # a sentence, not a recording of the evening
# what each refusal means, for the person who recorded the sentences
REASONS = {
    "silence": "第 {n} 句是静音。",
    "not_speech": "第 {n} 句里几乎没有人声（音乐、水声？）。",
    "too_short": "第 {n} 句的人声不到 1.5 秒。",
    "inconsistent": "第 {n} 句听起来不是另外两句的那个人读的。",
    "two_voices": "第 {n} 句里有不止一个人的声音。",
    "same_voice": "这个声音已经登记为 {speaker}（{member}）：一个人用两个名字会把记忆分成两份。",
    "name_taken": "{speaker} 已经登记了另一个人的声音。",
    "sentences": "需要正好 3 句。",
}
NOT_YOURS = "只有管理员能管理别的家庭的声音。"
FULL = "这个家已经登记了 16 个声音，请先删掉一个。"
UNAVAILABLE = "声音识别用不了：没有开启（voices.enabled）或模型没有安装（hearth models install）。"


def _household(asked: object, account: Account) -> str | None:
    """The household the account asks for, if it may manage it: its own, or any for admins."""
    if not isinstance(asked, str) or not asked.strip() or asked.strip() == account.person:
        return account.person
    if not account.admin:
        return None
    try:
        return person_id(asked.strip(), "household")
    except IdentityError:
        return None


def _refused(request: Request, account: Account, session: Session, status: int, message: str,
             household: str) -> Response:  # fmt: skip
    return page(request, "message.html", status, title="没有登记", kind="error", message=message,
                account=account, csrf=session.csrf, back=_back(household))  # fmt: skip


def _back(household: str) -> str:
    return f"/voices?household={quote(household)}"


@viewer
async def voices(request: Request, account: Account, session: Session) -> Response:
    ctx = context(request)
    household = _household(request.query_params.get("household"), account)
    if household is None:
        return _refused(request, account, session, 403, NOT_YOURS, account.person)
    store = VoiceStore(ctx.redis)
    members = [{"member": v.member, "speaker": v.speaker, "enrolled": when(v.enrolled_at)}
               for v in await store.voices(household)]  # fmt: skip
    households: list[str] = []
    if account.admin:
        mapped = set((await PersonMap(ctx.redis).all()).values())
        households = sorted({account.person, *mapped, *await store.households()})
    response = page(request, "voices.html", title="家人的声音", account=account,
                    csrf=session.csrf, household=household, members=members,
                    households=households, size=await store.size_bytes(household),
                    enabled=ctx.voice_weights is not None, sentences=READ_ALOUD["zh"])  # fmt: skip
    # a recorded sentence is played back from a blob: URL before it is sent
    response.headers["Content-Security-Policy"] += "; media-src 'self' blob:"
    return response


@viewer
async def recorder(request: Request, account: Account, session: Session) -> Response:
    """The page's script (a file of our own: the page's CSP allows no inline script)."""
    response = FileResponse(RECORDER, media_type="text/javascript")
    response.headers["Cache-Control"] = "no-store"
    return response


async def _sentences(form: FormData) -> list[bytes]:
    """The uploaded WAV files as 16 kHz mono PCM (NotAWav: not one, or far too long)."""
    files = [f for f in form.getlist("sentence") if isinstance(f, UploadFile) and f.filename]
    audio = [wav_to_pcm16k(await f.read()) for f in files]
    if any(len(pcm) > MAX_SENTENCE_S * RATE * 2 for pcm in audio):
        raise NotAWav(f"每句不超过 {MAX_SENTENCE_S} 秒")
    return audio


async def _household_form(
    request: Request,
) -> Response | tuple[Account, Session, FormData, str]:
    """A voices form, signed in and with its CSRF token, for a household the account may
    manage — or the refusal to answer instead."""
    checked = await guarded_form(request)
    if isinstance(checked, Response):
        return checked
    account, session, form = checked
    household = _household(form.get("household"), account)
    if household is None:
        return _refused(request, account, session, 403, NOT_YOURS, account.person)
    return account, session, form, household


async def voice_enrol(request: Request) -> Response:
    checked = await _household_form(request)
    if isinstance(checked, Response):
        return checked
    account, session, form, household = checked
    try:
        voice = await _enrol(request, account, household, form)
    except Refusal as exc:
        log.info("console.voice_refused", user=account.name, household=household,
                 reason=exc.reason, sentence=exc.sentence)  # fmt: skip
        status = 409 if exc.reason == "same_voice" else 422
        return _refused(request, account, session, status, f"{_reason(exc)}（{exc.reason}）",
                        household)  # fmt: skip
    except HouseholdFull:
        return _refused(request, account, session, 409, FULL, household)
    except (NotAWav, IdentityError) as exc:
        return _refused(request, account, session, 400, str(exc), household)
    except (WeightsError, VoicesOff) as exc:
        log.error("console.voices_unavailable", error=str(exc))
        return _refused(request, account, session, 503, UNAVAILABLE, household)
    log.info("console.voice_enrolled", user=account.name, household=household,
             member=voice.member, speaker=voice.speaker)  # fmt: skip
    return page(request, "message.html", title="已登记", account=account, csrf=session.csrf,
                message=f"{voice.speaker} 的声音已登记（{voice.member}）。",
                back=_back(household))  # fmt: skip


class VoicesOff(Exception):
    """Voices are switched off in this process (``voices.enabled``)."""


async def _enrol(request: Request, account: Account, household: str, form: FormData) -> Voice:
    """The form's sentences enrolled under its name: the member an admin typed, else the one
    the name is (or becomes) in the household."""
    ctx = context(request)
    if ctx.voice_weights is None:
        raise VoicesOff("voices.enabled is false")
    speaker, asked = str(form.get("speaker", "")).strip(), str(form.get("member", "")).strip()
    sentences = await _sentences(form)
    enrolled = await VoiceStore(ctx.redis).voices(household)
    member = asked if account.admin and asked else member_for(household, speaker, enrolled)
    embedder = await asyncio.to_thread(shared_embedder, ctx.voice_weights)
    return await enrol_member(ctx.redis, embedder, household, member, speaker, sentences)


def _reason(exc: Refusal) -> str:
    n = exc.sentence + 1 if exc.sentence is not None else ""
    return REASONS.get(exc.reason, str(exc)).format(n=n, speaker=exc.speaker, member=exc.member)


async def voice_remove(request: Request) -> Response:
    ctx = context(request)
    checked = await _household_form(request)
    if isinstance(checked, Response):
        return checked
    account, session, form, household = checked
    member = str(form.get("member", ""))
    try:
        removed = await VoiceStore(ctx.redis).remove(household, member)
    except IdentityError as exc:
        return _refused(request, account, session, 400, str(exc), household)
    log.info("console.voice_removed", user=account.name, household=household, member=member,
             removed=removed)  # fmt: skip
    return RedirectResponse(_back(household), 303)
