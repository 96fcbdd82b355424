"""``hearth bench locomo``: the read path on the public LoCoMo suite, scored with no LLM.

LoCoMo (snap-research, ``locomo10.json``, CC BY-NC 4.0 — read from where the user keeps it,
never packaged) holds 10 long conversations between two people over many sessions and 1,986
questions, each with the dialogue ids of its evidence turns. Each conversation becomes one
person's memories the way Hearth holds an imported transcript: one memory per turn (「Caroline:
I went to a LGBTQ support group yesterday」, a shared photo's caption appended), dated by its
session. Every question goes through the read path exactly as a device turn would; the score is
whether the memories it injected contain the evidence turns (evidence recall, per category), and
how much it injected (memories, characters). The same run asks a plain top-5 by cosine on the same
store and mem0 1.0.11's own ``search(limit=5)`` on the same vectors.

Split, once and by a fixed rule: conversations at even positions are **dev** (tune on them),
odd positions are **test** (report only). Category 5 questions are adversarial (they attribute
something to the wrong speaker or ask what was never said): for them the table also shows how
often nothing was injected.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import tempfile
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson
from rich.console import Console
from rich.table import Table

from bench.locomo_answer import AnswerLayer, JScore, sample_key
from bench.mem0_side import Mem0Side
from config.settings import HearthSettings
from memory import entities
from memory.schema import Memory, MemoryId, PersonId
from memory.store import EdgeMemoryStore, Search, search_async
from providers.embedder import UseEmbedder, embed_async
from providers.processes import LocalLLMServer, free_port
from server.memory.readpath import ReadPath

console = Console()
Split = Literal["dev", "test", "all"]
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
DEFAULT_DATA = Path("../shared/data/locomo/locomo10.json")
_IDS = uuid.UUID("6c0e2b55-90a4-4f3e-8d0b-7a1c5e2f9b13")
TOP_K = 5
SUMMED = ("questions", "evidence_recall", "any_evidence", "injected", "chars", "empty")


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]
    answer: str = ""  # the gold answer (categories 1–4)
    index: int = 0  # its position in the conversation's qa list


@dataclass(frozen=True, slots=True)
class Conversation:
    position: int
    sample_id: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def split(self) -> Split:
        return "dev" if self.position % 2 == 0 else "test"

    @property
    def person(self) -> PersonId:
        return PersonId(f"locomo-{self.position}")


def load(path: Path) -> list[Conversation]:
    raw = orjson.loads(path.read_bytes())
    return [_conversation(n, sample) for n, sample in enumerate(raw)]


def _conversation(position: int, sample: dict[str, Any]) -> Conversation:
    talk = sample["conversation"]
    turns: list[Turn] = []
    sessions = sorted(
        (int(k.split("_")[1]), v)
        for k, v in talk.items()
        if k.startswith("session_") and isinstance(v, list)
    )
    for number, session in sessions:
        at = _session_time(talk.get(f"session_{number}_date_time", ""))
        for turn in session:
            text = f"{turn['speaker']}: {turn['text']}"
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            turns.append(Turn(turn["dia_id"], text, at))
    questions = [
        Question(
            q["question"],
            int(q["category"]),
            frozenset(_evidence(q.get("evidence", []))),
            str(q.get("answer", "")),
            n,
        )
        for n, q in enumerate(sample["qa"])
    ]
    return Conversation(position, str(sample.get("sample_id", position)), turns, questions)


def _session_time(text: str) -> float:
    """「1:56 pm on 8 May, 2023」 → unix seconds (UTC); unknown → 0."""
    try:
        when = dt.datetime.strptime(text, "%I:%M %p on %d %B, %Y")
    except ValueError:
        return 0.0
    return when.replace(tzinfo=dt.UTC).timestamp()


def _evidence(items: Iterable[str]) -> list[str]:
    """Evidence ids, including the few the file writes as 「D8:6; D9:17」 in one string."""
    return [part for item in items for part in item.replace(";", " ").split() if ":" in part]


@dataclass
class Score:
    """One system's figures for one (split, category)."""

    questions: int = 0
    evidence_recall: float = 0.0  # summed per question, divided at the end
    any_evidence: int = 0
    injected: int = 0
    chars: int = 0
    empty: int = 0

    def add(self, found: set[str], evidence: frozenset[str], injected: int, chars: int) -> None:
        self.questions += 1
        if evidence:
            hit = len(found & evidence)
            self.evidence_recall += hit / len(evidence)
            self.any_evidence += hit > 0
        self.injected += injected
        self.chars += chars
        self.empty += injected == 0


@dataclass
class Results:
    scores: dict[tuple[str, Split, int], Score] = field(default_factory=dict)
    j: dict[tuple[str, Split, int], JScore] = field(default_factory=dict)

    def score(self, system: str, split: Split, category: int) -> Score:
        return self.scores.setdefault((system, split, category), Score())

    def jscore(self, system: str, split: Split, category: int) -> JScore:
        return self.j.setdefault((system, split, category), JScore())


@dataclass(frozen=True, slots=True)
class Answering:
    """The answer layer's models and which questions it asks (per split and category 1–4)."""

    layer: AnswerLayer
    per_category: int

    def chosen(self, conversations: list[Conversation]) -> set[tuple[str, int]]:
        picked: set[tuple[str, int]] = set()
        for split in ("dev", "test"):
            for category in (1, 2, 3, 4):
                pool = [
                    (sample_key(c.sample_id, q.index), c.sample_id, q.index)
                    for c in conversations if c.split == split
                    for q in c.questions if q.category == category and q.answer
                ]  # fmt: skip
                picked |= {(sid, n) for _key, sid, n in sorted(pool)[: self.per_category]}
        return picked


async def run(
    settings: HearthSettings,
    path: Path,
    splits: list[Split],
    with_mem0: bool,
    answering: Answering | None = None,
) -> Results:
    conversations = [c for c in load(path) if "all" in splits or c.split in splits]
    chosen = answering.chosen(conversations) if answering else set()
    embedder = UseEmbedder(settings.memory.embedder_threads, settings.memory.embedder_precision)
    results = Results()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        store = EdgeMemoryStore(folder / "edge", embedder.dim)
        mem0 = Mem0Side(embedder, folder, "locomo") if with_mem0 else None
        read_path = ReadPath(embedder, store, settings.memory)
        for conversation in conversations:
            console.print(
                f"{conversation.sample_id} ({conversation.split}): "
                f"{len(conversation.turns)} turns, {len(conversation.questions)} questions"
            )
            dia_of = await _load(conversation, embedder, store, mem0)
            await _ask(conversation, read_path, store, mem0, dia_of, results)
            if answering is not None:
                await _answer(conversation, read_path, store, answering.layer, chosen, results)
        store.close()
    return results


async def _load(
    conversation: Conversation, embedder: UseEmbedder, store: EdgeMemoryStore, mem0: Mem0Side | None
) -> dict[str, str]:
    """The conversation as the person's memories; returns memory text/key → dialogue id."""
    texts = [t.text for t in conversation.turns]
    known = {name for text in texts for name in entities.names_in(text)}
    vectors = await embed_async(embedder, texts)
    memories = [
        Memory(
            text=t.text,
            person=conversation.person,
            entities=entities.entities_for(t.text, None, known),
            source="import",
            created_at=t.at,
            id=MemoryId(str(uuid.uuid5(_IDS, f"{conversation.sample_id}/{t.dia_id}"))),
        )
        for t in conversation.turns
    ]
    store.upsert(memories, vectors)
    if mem0 is not None:
        await asyncio.to_thread(mem0.insert, conversation.person, texts, vectors)
    dia_of: dict[str, str] = {
        m.key: t.dia_id for m, t in zip(memories, conversation.turns, strict=True)
    }
    dia_of.update({t.text: t.dia_id for t in conversation.turns})
    return dia_of


async def _ask(
    conversation: Conversation,
    read_path: ReadPath,
    store: EdgeMemoryStore,
    mem0: Mem0Side | None,
    dia_of: dict[str, str],
    results: Results,
) -> None:
    person, split = conversation.person, conversation.split
    now = max(t.at for t in conversation.turns) + 86400
    for question in conversation.questions:
        recall = await read_path.recall(person, question.text, now)
        injected = recall.safety + recall.related
        found = {dia_of[r.memory.key] for r in injected}
        results.score("hearth", split, question.category).add(
            found, question.evidence, len(injected), len(recall.block)
        )
        [vector] = await embed_async(read_path.embedder, [question.text])
        [hits] = await search_async(store, person, [Search(vector, TOP_K)], now)
        top = {dia_of[h.memory.key] for h in hits}
        chars = sum(len(h.memory.text) for h in hits)
        results.score("top5", split, question.category).add(
            top, question.evidence, len(hits), chars
        )
        if mem0 is not None:
            texts = await asyncio.to_thread(mem0.search, person, question.text, TOP_K)
            theirs = {dia_of[t] for t in texts if t in dia_of}
            results.score("mem0", split, question.category).add(
                theirs, question.evidence, len(texts), sum(map(len, texts))
            )


async def _answer(
    conversation: Conversation,
    read_path: ReadPath,
    store: EdgeMemoryStore,
    layer: AnswerLayer,
    chosen: set[tuple[str, int]],
    results: Results,
) -> None:
    """The answer layer on the chosen questions: what Hearth injected vs the plain top-5 (the
    same five mem0's search returns on these vectors)."""
    person, split = conversation.person, conversation.split
    now = max(t.at for t in conversation.turns) + 86400
    for q in conversation.questions:
        if (conversation.sample_id, q.index) not in chosen:
            continue
        recall = await read_path.recall(person, q.text, now)
        ours = [r.memory for r in recall.safety + recall.related]
        [vector] = await embed_async(read_path.embedder, [q.text])
        [hits] = await search_async(store, person, [Search(vector, TOP_K)], now)
        for system, memories in (("hearth", ours), ("top5", [h.memory for h in hits])):
            score = results.jscore(system, split, q.category)
            await layer.score(score, system, q.text, q.answer, memories)
        console.print(f"  answered {q.category} {q.text[:60]!r}", highlight=False)


def report(results: Results, splits: list[Split]) -> None:
    systems = sorted({k[0] for k in results.scores}, key=["hearth", "top5", "mem0"].index)
    for split in ("dev", "test"):
        if "all" not in splits and split not in splits:
            continue
        table = Table(title=f"LoCoMo retrieval layer — {split} split (evidence recall, no LLM)")
        table.add_column("category")
        table.add_column("questions", justify="right")
        for system in systems:
            table.add_column(f"{system} recall", justify="right")
            table.add_column(f"{system} mem/q", justify="right")
        table.add_column("hearth chars/q", justify="right")
        table.add_column("hearth none", justify="right")
        for category, name in [*CATEGORIES.items(), (0, "1–4 all")]:
            cells: list[str] = []
            rows = [_merged(results, s, split, category) for s in systems]
            if rows[0].questions == 0:
                continue
            for row in rows:
                cells += [f"{row.evidence_recall / row.questions:.3f}",
                          f"{row.injected / row.questions:.1f}"]  # fmt: skip
            hearth = rows[0]
            cells += [f"{hearth.chars / hearth.questions:.0f}",
                      f"{hearth.empty / hearth.questions:.2f}"]  # fmt: skip
            table.add_row(f"{category or ''} {name}".strip(), str(hearth.questions), *cells)
        console.print(table)
        _report_j(results, split)


def _report_j(results: Results, split: Split) -> None:
    systems = sorted({k[0] for k in results.j if k[1] == split})
    if not systems:
        return
    table = Table(title=f"LoCoMo answer layer — {split} split (J: judged CORRECT)")
    table.add_column("category")
    for system in systems:
        table.add_column(f"{system} J", justify="right")
    table.add_column("unparsed / errors", justify="right")
    for category, name in [*list(CATEGORIES.items())[:4], (0, "1–4 all")]:
        wanted = [category] if category else [1, 2, 3, 4]
        cells, odd = [], 0
        for system in systems:
            scores = [v for (n, s, c), v in results.j.items() if n == system and s == split
                      and c in wanted]  # fmt: skip
            asked = sum(v.questions for v in scores)
            correct = sum(v.correct for v in scores)
            odd += sum(v.unparsed + v.errors for v in scores)
            cells.append(f"{correct}/{asked} ({correct / max(asked, 1):.2f})")
        table.add_row(f"{category or ''} {name}".strip(), *cells, str(odd))
    console.print(table)


def _merged(results: Results, system: str, split: Split, category: int) -> Score:
    """One category's score, or categories 1–4 together (category 0)."""
    wanted = [category] if category else [1, 2, 3, 4]
    total = Score()
    for (name, s, c), score in results.scores.items():
        if name == system and s == split and c in wanted:
            for attr in SUMMED:
                setattr(total, attr, getattr(total, attr) + getattr(score, attr))
    return total


def as_json(results: Results) -> dict[str, Any]:
    out: dict[str, Any] = defaultdict(dict)
    for (system, split, category), s in sorted(results.scores.items()):
        out[f"{system}/{split}"][str(category)] = {
            "questions": s.questions,
            "evidence_recall": round(s.evidence_recall / max(s.questions, 1), 4),
            "memories_per_question": round(s.injected / max(s.questions, 1), 2),
        }
    for (system, split, category), j in sorted(results.j.items()):
        out[f"{system}/{split}/answer"][str(category)] = {
            "questions": j.questions, "correct": j.correct, "unparsed": j.unparsed,
            "errors": j.errors,
        }  # fmt: skip
    return dict(out)


@dataclass(frozen=True, slots=True)
class AnswerOptions:
    per_category: int  # questions per split and category 1–4; 0 = no answer layer
    answer_url: str | None = None  # None: a local llama.cpp server with the configured model
    answer_model: str = "local"
    judge_url: str | None = None  # None: the answering model
    judge_model: str = "local"
    answer_key: str = ""
    judge_key: str = ""


def main(
    settings: HearthSettings,
    path: Path,
    splits: list[Split],
    with_mem0: bool,
    out: Path | None,
    answer: AnswerOptions | None = None,
) -> None:
    if not path.exists():
        raise SystemExit(
            f"{path} not found: pass --data with the path of LoCoMo's locomo10.json "
            "(snap-research/LoCoMo, data/locomo10.json)"
        )
    results, samples = asyncio.run(_with_models(settings, path, splits, with_mem0, answer))
    report(results, splits)
    if out is not None:
        figures = as_json(results) | ({"answers": samples} if samples else {})
        out.write_bytes(orjson.dumps(figures, option=orjson.OPT_INDENT_2))
        console.print(f"figures written to {out}")


async def _with_models(
    settings: HearthSettings,
    path: Path,
    splits: list[Split],
    with_mem0: bool,
    answer: AnswerOptions | None,
) -> tuple[Results, list[dict[str, object]]]:
    if answer is None or answer.per_category <= 0:
        return await run(settings, path, splits, with_mem0), []
    server = None
    url = answer.answer_url
    if url is None:
        model = settings.resolve(settings.local_llm.model_file)
        local = settings.local_llm.model_copy(update={"port": free_port()})
        server = LocalLLMServer(local, model, Path(tempfile.mkdtemp(prefix="locomo-llm-")))
        await server.start()
        url = server.base_url
        console.print(f"answering and judging with the local {model.name} ({server.engine.name})")
    layer = AnswerLayer(
        url, answer.answer_model, answer.judge_url or url, answer.judge_model,
        answer.answer_key, answer.judge_key,
    )  # fmt: skip
    try:
        results = await run(
            settings, path, splits, with_mem0, Answering(layer, answer.per_category)
        )
    finally:
        if server is not None:
            server.stop()
    return results, layer.samples
