"""What a person looks at after a run: a terminal table per category and layer, every question
as a JSON line, a summary, and an HTML report with a chart per layer; and run comparisons."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from bench.e2e.data import MEMORY_CATEGORIES, SAFETY_RULES, SPLITS, split_of
from bench.e2e.scoring import Result, Tally, summarize

LAYERS = ("retrieval", "answer", "rubric", "safety")
KINDS = (*MEMORY_CATEGORIES, *SAFETY_RULES)


def write_run(
    folder: Path, results: list[Result], meta: dict[str, Any], mem0: dict[str, Tally] | None = None
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "results.jsonl").open("wb") as out:
        for r in results:
            out.write(orjson.dumps(r.as_json()) + b"\n")
    summary = {
        "meta": meta,
        "scores": _scores(results),
        "splits": {split: _scores([r for r in results if r.split == split]) for split in SPLITS},
        "mem0_test": {k: {"passed": t.passed, "scored": t.scored} for k, t in (mem0 or {}).items()},
        "judge_unusable": [r.id for r in results if r.answer in ("unparsed", "error")],
    }
    (folder / "summary.json").write_bytes(orjson.dumps(summary, option=orjson.OPT_INDENT_2))
    (folder / "report.html").write_text(html_report(results, summarize(results), meta))


def _scores(results: list[Result]) -> dict[str, dict[str, dict[str, int]]]:
    return {kind: {layer: {"passed": t.passed, "scored": t.scored} for layer, t in row.items()}
            for kind, row in summarize(results).items()}  # fmt: skip


def terminal_table(
    results: list[Result], title: str, mem0: dict[str, Tally] | None = None
) -> Table:
    """Per category: each layer on the dev split (tuned on) and the test split (reported), and
    mem0's search on the test split when it ran."""
    tables = {split: summarize([r for r in results if r.split == split]) for split in SPLITS}
    out = Table(title=title)
    out.add_column("category / rule")
    out.add_column("questions", justify="right")
    for layer in LAYERS:
        for split in SPLITS:
            out.add_column(f"{layer} {split}", justify="right")
    if mem0 is not None:
        out.add_column("mem0 test", justify="right")
    totals = {(layer, split): Tally() for layer in LAYERS for split in SPLITS}
    theirs = Tally()
    for kind in KINDS:
        if not any(kind in t for t in tables.values()):
            continue
        cells = []
        for layer in LAYERS:
            for split in SPLITS:
                tally = tables[split].get(kind, {}).get(layer, Tally())
                cells.append(tally.text())
                totals[layer, split].passed += tally.passed
                totals[layer, split].scored += tally.scored
        if mem0 is not None:
            tally = mem0.get(kind, Tally())
            cells.append(tally.text())
            theirs.passed += tally.passed
            theirs.scored += tally.scored
        count = sum(1 for r in results if r.kind == kind)
        out.add_row(kind, str(count), *cells)
    last = [theirs.text()] if mem0 is not None else []
    out.add_row("all", str(len(results)), *(t.text() for t in totals.values()), *last,
                style="bold")  # fmt: skip
    return out


def _bars(table: dict[str, dict[str, Tally]], layer: str) -> str:
    """One horizontal bar per category: the pass rate of ``layer`` (inline SVG, no scripts)."""
    rows = [(k, table[k][layer]) for k in KINDS if k in table and table[k][layer].scored]
    if not rows:
        return ""
    height = 22 * len(rows) + 10
    parts = [f'<svg width="560" height="{height}" role="img" aria-label="{layer}">']
    for i, (kind, tally) in enumerate(rows):
        y = 5 + 22 * i
        width = int(360 * (tally.rate or 0))
        parts.append(f'<text x="0" y="{y + 14}" font-size="13">{kind}</text>')
        parts.append(f'<rect x="110" y="{y}" width="360" height="16" fill="#eee"/>')
        parts.append(f'<rect x="110" y="{y}" width="{width}" height="16" fill="#3b7dd8"/>')
        parts.append(f'<text x="478" y="{y + 14}" font-size="13">{tally.text()}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _replaced(r: Result) -> str:
    """What the model wrote that the device did not say (server.device.claims / grounding)."""
    return "".join(
        f"<br><small><s>{html.escape(str(x.get('said', '')))}</s> "
        f"({html.escape(str(x.get('why', '')))})</small>"
        for x in r.replaced
    )


def html_report(results: list[Result], table: dict[str, dict[str, Tally]],
                meta: dict[str, Any]) -> str:  # fmt: skip
    esc = html.escape
    charts = "".join(
        f"<section><h2>{layer}</h2>{_bars(table, layer)}</section>" for layer in LAYERS
    )
    rows = []
    for r in results:
        verdicts = (("retrieval", r.retrieval), ("answer", r.answer), ("rubric", r.rubric),
                    ("safety", r.safety))  # fmt: skip
        marks = " ".join(f"<b>{k}</b>: {esc(str(v))}" for k, v in verdicts if v is not None)
        rows.append(
            f"<tr><td>{esc(r.id)}</td><td>{esc(r.kind)}</td><td>{esc(r.question)}</td>"
            f"<td>{esc(r.reply)}{_replaced(r)}</td><td><pre>{esc(r.injected)}</pre></td>"
            f"<td>{esc(', '.join(r.tool_calls))}</td><td>{marks}<br><small>"
            f"{esc(r.retrieval_detail)} {esc(r.safety_detail)} {esc(r.answer_reason)} "
            f"{esc(r.rubric_reason)}"
            f"</small></td></tr>"
        )
    settings = esc(orjson.dumps(meta, option=orjson.OPT_INDENT_2).decode())
    return f"""<!doctype html><html lang="zh"><head><meta charset="utf-8">
<title>Hearth e2e bench — {esc(str(meta.get("name", "")))}</title>
<style>body{{font-family:sans-serif;margin:2em}}td,th{{border-bottom:1px solid #ddd;
padding:4px;vertical-align:top;font-size:13px}}pre{{white-space:pre-wrap;margin:0}}
section{{display:inline-block;margin-right:2em}}</style></head><body>
<h1>Hearth e2e bench — {esc(str(meta.get("name", "")))}</h1><pre>{settings}</pre>{charts}
<table><tr><th>id</th><th>kind</th><th>question</th><th>answer</th><th>injected memory</th>
<th>tools</th><th>verdicts</th></tr>{"".join(rows)}</table></body></html>"""


def load_run(folder: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    results = [orjson.loads(line) for line in (folder / "results.jsonl").read_bytes().splitlines()]
    summary: dict[str, Any] = orjson.loads((folder / "summary.json").read_bytes())
    return results, summary


def _tally(summary: dict[str, Any], split: str, kind: str, layer: str) -> dict[str, int]:
    """A run's tally for (split, kind, layer); runs from before the split count as neither."""
    found: dict[str, int] = (
        summary.get("splits", {})
        .get(split, {})
        .get(kind, {})
        .get(layer, {"passed": 0, "scored": 0})
    )
    return found


def compare(a: Path, b: Path, console: Console) -> None:
    """Per-category deltas per layer, then every question whose verdict changed."""
    (ra, sa), (rb, sb) = load_run(a), load_run(b)
    table = Table(title=f"{a.name} → {b.name}")
    table.add_column("split")
    table.add_column("category / rule")
    for layer in LAYERS:
        table.add_column(layer, justify="right")
    for split in SPLITS:
        for kind in KINDS:
            cells = []
            for layer in LAYERS:
                x = _tally(sa, split, kind, layer)
                y = _tally(sb, split, kind, layer)
                if not x["scored"] and not y["scored"]:
                    cells.append("—")
                    continue
                delta = y["passed"] - x["passed"]
                sign = f"[green]+{delta}[/green]" if delta > 0 else (
                    f"[red]{delta}[/red]" if delta < 0 else "±0")  # fmt: skip
                cells.append(f"{x['passed']}/{x['scored']} → {y['passed']}/{y['scored']} {sign}")
            if any(c != "—" for c in cells):
                table.add_row(split, kind, *cells)
    console.print(table)
    console.print(f"A: {orjson.dumps(sa['meta'].get('overrides')).decode()}  "
                  f"B: {orjson.dumps(sb['meta'].get('overrides')).decode()}")  # fmt: skip
    by_id = {r["id"]: r for r in ra}
    changed = Table(title="questions whose verdict changed")
    for column in ("id", "question", "layer", "A", "B"):
        changed.add_column(column)
    changed.add_column("split")
    for r in rb:
        old = by_id.get(r["id"])
        if old is None:
            continue
        for layer in LAYERS:
            if old.get(layer) != r.get(layer):
                changed.add_row(r["id"], r["question"], layer, str(old.get(layer)),
                                str(r.get(layer)), split_of(r["id"]))  # fmt: skip
    console.print(changed)
