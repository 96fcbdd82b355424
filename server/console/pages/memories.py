"""A person's own memories (list, search, filter, delete with confirmation), speakers, jobs."""

from __future__ import annotations

import orjson
import structlog
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from config import keys
from memory.locks import holding_person
from memory.schema import Memory, MemoryClass, MemoryId
from memory.store import store_call
from server.console.accounts import Account
from server.console.sessions import Session
from server.console.views import (
    MAX_LIST,
    ConsoleContext,
    context,
    guarded_form,
    page,
    row,
    viewer,
    when,
)
from server.memory.origins import origin_of

log = structlog.get_logger(__name__)


@viewer
async def memories(request: Request, account: Account, session: Session) -> Response:
    ctx = context(request)
    person = account.person
    params = request.query_params
    q, speaker = params.get("q", "").strip(), params.get("speaker", "")
    cls, source = params.get("cls", ""), params.get("source", "")
    everything = (await store_call(ctx.memory.store, ctx.memory.store.scroll, person,
                                   None, MAX_LIST)).memories  # fmt: skip
    scores: dict[str, float] = {}
    if q:
        recall = await ctx.memory.read_path.recall(person, q)
        hits = [*recall.safety, *recall.related]
        scores = {r.memory.key: r.score for r in hits}
        shown = [r.memory for r in hits]
    else:
        shown = sorted(everything, key=lambda m: m.created_at or 0, reverse=True)
    shown = [
        m for m in shown
        if (not speaker or m.speaker == speaker) and (not cls or m.cls.value == cls)
        and (not source or m.source == source)
    ]  # fmt: skip
    return page(
        request, "memories.html", title="记忆", account=account, csrf=session.csrf,
        memories=[row(m, scores.get(m.key)) for m in shown], total=len(everything),
        q=q, speaker=speaker, cls=cls, source=source,
        speakers=sorted({m.speaker for m in everything if m.speaker}),
        sources=sorted({m.source for m in everything}),
        classes=[c.value for c in MemoryClass],
    )  # fmt: skip


async def own(ctx: ConsoleContext, account: Account, form: FormData) -> list[Memory]:
    """The selected ids that are this person's memories (others simply do not resolve)."""
    ids = [MemoryId(str(v)) for v in form.getlist("id")][:MAX_LIST]
    if not ids:
        return []
    return list(await store_call(ctx.memory.store, ctx.memory.store.get,
                                 account.person, ids))  # fmt: skip


async def confirm_delete(request: Request) -> Response:
    ctx = context(request)
    checked = await guarded_form(request)
    if isinstance(checked, Response):
        return checked
    account, session, form = checked
    doomed = await own(ctx, account, form)
    if not doomed:
        return page(request, "message.html", 400, title="没有选中", account=account,
                    csrf=session.csrf, message="没有选中任何属于你的记忆。")  # fmt: skip
    return page(request, "confirm_delete.html", title="确认删除", account=account,
                csrf=session.csrf, memories=[row(m) for m in doomed])  # fmt: skip


async def delete(request: Request) -> Response:
    ctx = context(request)
    checked = await guarded_form(request)
    if isinstance(checked, Response):
        return checked
    account, session, form = checked
    doomed = await own(ctx, account, form)
    if doomed:
        # under the store lock, like every other writer: an update in flight cannot bring a
        # deleted memory back
        async with holding_person(ctx.redis, account.person, wait_s=30):
            await store_call(ctx.memory.store, ctx.memory.store.delete, account.person,
                             [m.key for m in doomed])  # fmt: skip
        for memory in doomed:  # an image memory's photo goes with it
            if ctx.photos is not None:
                ctx.photos.drop(memory)
    log.info("console.deleted", user=account.name, person=account.person,
             memories=[m.text for m in doomed])  # fmt: skip
    return page(request, "message.html", title="已删除", account=account, csrf=session.csrf,
                message=f"已删除 {len(doomed)} 条记忆。")  # fmt: skip


async def _named(ctx: ConsoleContext, account: Account, request: Request) -> Memory | None:
    """The memory the path names, if it is the account's own (others simply do not resolve)."""
    memory_id = MemoryId(str(request.path_params["memory_id"]))
    found = await store_call(ctx.memory.store, ctx.memory.store.get, account.person, [memory_id])
    return found[0] if found else None


@viewer
async def why(request: Request, account: Account, session: Session) -> Response:
    """Why Hearth remembers this memory: the conversation it came from, the photo, or the call
    that stored it (the same answer as the API's ``/expand``). Only the account's own."""
    ctx = context(request)
    memory = await _named(ctx, account, request)
    if memory is None:
        return page(request, "message.html", 404, title="没有这条记忆", account=account,
                    csrf=session.csrf, message="没有这条记忆（或它不属于你）。")  # fmt: skip
    return page(request, "why.html", title="为什么记得", account=account, csrf=session.csrf,
                memory=row(memory), origin=await origin_of(ctx.redis, memory))  # fmt: skip


@viewer
async def photo(request: Request, account: Account, session: Session) -> Response:
    """An image memory's photo, for its own account only."""
    ctx = context(request)
    memory = await _named(ctx, account, request)
    kept = memory.photo if memory is not None else None
    data = ctx.photos.read(account.person, kept.file) if kept and ctx.photos else None
    if kept is None or data is None:
        return Response("no such photo", 404, media_type="text/plain")
    return Response(data, media_type=kept.content_type,
                    headers={"Cache-Control": "private, no-store"})  # fmt: skip


@viewer
async def speakers(request: Request, account: Account, session: Session) -> Response:
    ctx = context(request)
    from memory.registry import Speakers

    person = account.person
    rows = []
    for name, at in sorted((await Speakers(ctx.redis).all(account.person)).items()):
        count = await store_call(ctx.memory.store, ctx.memory.store.count, person, name)
        rows.append({"name": name, "at": at[:16], "count": count})
    return page(request, "speakers.html", title="说话人", account=account, csrf=session.csrf,
                speakers=rows)  # fmt: skip


@viewer
async def jobs(request: Request, account: Account, session: Session) -> Response:
    ctx = context(request)
    from workers.failures import DeadLetters

    raw = await ctx.redis.lrange(keys.transcripts(account.person), 0, 19)  # type: ignore[misc]
    sessions = []
    for item in raw:
        record = orjson.loads(item)
        sessions.append({"session_id": str(record.get("session_id", "")),
                         "device_id": record.get("device_id", ""),
                         "ended": when(record.get("ended_at")),
                         "utterances": len(record.get("transcript", [])),
                         "reason": record.get("end_reason", "")})  # fmt: skip
    failures = [{"job_id": f.job_id, "kind": f.kind, "tries": f.tries, "error": f.error[:200],
                 "at": when(f.failed_at)}
                for f in await DeadLetters(ctx.redis).all()
                if str(f.record.get("person", "")) == account.person]  # fmt: skip
    return page(request, "jobs.html", title="写入任务", account=account, csrf=session.csrf,
                sessions=sessions, failures=failures)  # fmt: skip
