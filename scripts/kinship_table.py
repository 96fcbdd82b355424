"""Build ``memory/kinship.json``, the household kinship-term table, from the npm package
relationship.js (a Chinese kinship calculator, MIT licence) rather than from a hand list.

    .venv/bin/python scripts/kinship_table.py [--lib-dir /tmp/kin] [--install] [--out PATH]
    .venv/bin/python scripts/kinship_table.py --check      # exit 1 if the committed file differs

``scripts/kinship_table.mjs`` reads the library (its ``relationship.data`` table: relation chain
key -> terms, and its calculator API); this script filters and groups:

* chains: the library's keys (``f`` father, ``m`` mother, ``h`` husband, ``w`` wife, ``s`` son,
  ``d`` daughter, ``ob``/``lb``/``xb`` elder/younger/any brother, ``os``/``ls``/``xs`` sisters,
  ``&o``/``&l`` elder/younger, ``&N`` birth rank, ``[a|b]`` either, leading ``1,``/``0,`` a male/
  female speaker). A term is kept when it has 1-4 characters and a reading of 1-3 hops; only
  those readings are recorded.
* dropped: the compounds the library synthesises by putting a spouse prefix before every term of
  the spouse's side (夫爸爸, 婆家妈妈, 岳家老爸 …, its ``mateMap``; read from the bundle) when
  they trail a key's list, and the birth-rank templates (几舅) as words.
* added, each checked against the library's own answer: birth-rank forms of the templates whose
  rank comes first (二舅, 三姨, 大哥 … with the library's ``&N`` key) and the bare 表 forms the
  library reads as 姑表 or 舅表 (表哥 = 姑表哥 or 舅表哥).
* synonyms: terms whose readings expand to the same set of chains; the canonical term is the
  first of them in the library's own order (its first name for a chain is its preferred one).
* child_calls: what the speaker's child (``孩子``) calls the person, per speaker gender, from the
  library's "how does X call Y" mode (``target``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NODE_SCRIPT = ROOT / "scripts" / "kinship_table.mjs"
OUT = ROOT / "memory" / "kinship.json"
PACKAGE = "relationship.js"
VERSION = "1.2.9"
MAX_HOPS = 3
MAX_CHARS = 4
TEMPLATE = "几"  # the library's birth-rank placeholder: 几舅 -> 大舅, 二舅, 三舅 …
# the library's birth ranks (number2zh in its src/module/utils.js): 大 is 1, 小 is 99
RANKS = {"大": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
RANKS |= {"十": 10, "小": 99}
# the library's reading of a bare 表 (src/module/rule/replace.js: ^表 -> 姑表 | 舅表)
COUSIN_SIDES = ("姑表", "舅表")
MALE = {"f", "h", "s", "ob", "lb", "xb"}
FEMALE = {"m", "w", "d", "os", "ls", "xs"}


def ensure_library(lib_dir: Path, install: bool) -> None:
    manifest = lib_dir / "node_modules" / PACKAGE / "package.json"
    if not manifest.exists():
        if not install:
            sys.exit(f"{PACKAGE} is not in {lib_dir}: npm install {PACKAGE}@{VERSION} there")
        lib_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", f"{PACKAGE}@{VERSION}"],
            cwd=lib_dir,
            check=True,
        )
    found = json.loads(manifest.read_text())["version"]
    if found != VERSION:
        sys.exit(f"{lib_dir} has {PACKAGE} {found}, the table is built from {VERSION}")


def node(mode: str, lib_dir: Path, stdin: Any = None) -> Any:
    done = subprocess.run(
        ["node", str(NODE_SCRIPT), mode, str(lib_dir)],
        input=None if stdin is None else json.dumps(stdin, ensure_ascii=False),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def split_top(text: str, sep: str) -> list[str]:
    """Split at ``sep`` outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += (char == "[") - (char == "]")
        if char == sep and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def expand(key: str) -> list[str]:
    """A key's plain chains: ``[f,xs|m,xb],s&o`` -> ``f,xs,s&o`` and ``m,xb,s&o``."""
    paths: list[str] = []
    for selector in key.split("#"):
        partial = [""]
        for hop in split_top(selector, ","):
            options = split_top(hop[1:-1], "|") if hop.startswith("[") else [hop]
            partial = [f"{p},{o}" if p else o for p in partial for o in options]
        paths += [p.strip(",") for p in partial]
    return list(dict.fromkeys(paths))


def hops(path: str) -> list[str]:
    """The relation hops, without rank/age marks or the speaker's sex."""
    return [h.split("&")[0] for h in path.split(",") if h and h not in ("0", "1")]


def gender_of(paths: list[str]) -> str | None:
    found = {"m" if hops(p)[-1] in MALE else "f" if hops(p)[-1] in FEMALE else None for p in paths}
    return found.pop() if len(found) == 1 else None


def generation_of(paths: list[str]) -> int | None:
    steps = {"f": 1, "m": 1, "s": -1, "d": -1}
    found = {sum(steps.get(h, 0) for h in hops(p)) for p in paths}
    return found.pop() if len(found) == 1 else None


def rank_key(key: str, rank: int) -> str:
    """The library's key for a ranked term (src/module/selector.js): 'm,xb' -> 'm,xb&2',
    'ob,w' -> 'ob&2,w'."""
    if key.endswith((",h", ",w")):
        return f"{key[:-2]}&{rank}{key[-2:]}"
    return f"{key}&{rank}"


def synthesised(key: str, names: list[str], table: dict[str, list[str]], prefixes: Any) -> set[str]:
    """The spouse-prefixed compounds the library appends to the end of a key's list."""
    side, _, rest = key.partition(",")
    if side not in ("h", "w") or rest not in table:
        return set()
    compounds = {p + n for p in prefixes[side] for n in table[rest]}
    tail: set[str] = set()
    for name in reversed(names):
        if name not in compounds:
            break
        tail.add(name)
    return tail


@dataclass
class Term:
    chains: list[str] = field(default_factory=list)
    origin: str = "data"
    longer: int = 0  # readings of more than MAX_HOPS hops, left out


def literal_terms(table: dict[str, list[str]], prefixes: Any) -> dict[str, Term]:
    found: dict[str, Term] = {}
    for key, names in table.items():
        if key in ("", "o"):  # the speaker, and the library's author easter egg
            continue
        lengths = [len(hops(p)) for p in expand(key)]
        short = min(lengths) >= 1 and max(lengths) <= MAX_HOPS
        made_up = synthesised(key, names, table, prefixes)
        for name in dict.fromkeys(names):
            if TEMPLATE in name or name in made_up or len(name) > MAX_CHARS:
                continue
            term = found.setdefault(name, Term())
            if short:
                term.chains.append(key)
            else:
                term.longer += 1
    return {name: term for name, term in found.items() if term.chains}


def derived_terms(table: dict[str, list[str]], literal: dict[str, Term]) -> dict[str, Term]:
    found: dict[str, Term] = {}
    for key, names in table.items():
        lengths = [len(hops(p)) for p in expand(key)]
        if not (min(lengths) >= 1 and max(lengths) <= MAX_HOPS):
            continue
        for name in names:
            if name.startswith(TEMPLATE) and len(name) <= MAX_CHARS:
                for zh, rank in RANKS.items():
                    ranked = zh + name[1:]
                    if ranked not in literal:
                        found.setdefault(ranked, Term(origin="rank")).chains.append(
                            rank_key(key, rank)
                        )
    for name, term in literal.items():
        bare = "表" + name[2:]
        if name.startswith(COUSIN_SIDES[0]) and bare not in literal:
            other = literal.get(COUSIN_SIDES[1] + name[2:])
            if other is not None:
                found[bare] = Term(chains=term.chains + other.chains, origin="cousin")
    return {name: Term(list(dict.fromkeys(t.chains)), t.origin) for name, t in found.items()}


def resolve(lib_dir: Path, names: list[str], child: list[str]) -> dict[str, Any]:
    """The library's answers, split over node processes (each call copies its 76k-entry map)."""
    width = max(1, min(8, os.cpu_count() or 1))
    jobs = [{"names": names[i::width], "child": child[i::width]} for i in range(width)]
    with ThreadPoolExecutor(width) as pool:
        parts = list(pool.map(lambda job: node("resolve", lib_dir, job), jobs))
    return {what: {k: v for part in parts for k, v in part[what].items()} for what in jobs[0]}


def entries(dump: dict[str, Any], lib_dir: Path) -> dict[str, dict[str, Any]]:
    table = {key: names for key, names in dump["table"]}
    literal = literal_terms(table, dump["spouse_prefixes"])
    derived = derived_terms(table, literal)
    every = literal | derived  # literal first, each in the library's order
    paths = {
        name: sorted({p for key in t.chains for p in expand(key)}) for name, t in every.items()
    }
    # one speaker of each relation asks the library what the child calls that person; a term
    # with readings left out would bring their answers in
    speakers: dict[frozenset[str], str] = {}
    for name, term in every.items():
        if not term.longer:
            speakers.setdefault(frozenset(paths[name]), name)
    answers = resolve(lib_dir, list(derived), list(speakers.values()))
    every = {n: t for n, t in every.items() if n in literal or answers["names"][n]}
    groups: dict[frozenset[str], str] = {}
    out: dict[str, dict[str, Any]] = {}
    for name, term in every.items():
        relation = frozenset(paths[name])
        speaker = speakers.get(relation)
        calls = answers["child"][speaker] if speaker and not term.longer else {}
        out[name] = {
            "canonical": groups.setdefault(relation, name),
            "gender": gender_of(paths[name]),
            "generation": generation_of(paths[name]),
            "chains": term.chains,
            "single_char": len(name) == 1,
            "origin": term.origin,
            "longer_readings": term.longer,
            "child_calls": {sex: said for sex, said in calls.items() if said},
        }
    return out


def header(dump: dict[str, Any]) -> dict[str, Any]:
    return {
        "source": {
            "name": dump["name"],
            "version": dump["version"],
            "description": dump["description"],
            "license": dump["license"],
            "author": dump["author"],
            "homepage": dump["homepage"],
            "repository": dump["repository"],
            "table_size": dump["data_count"],
            "license_text": dump["license_text"].replace("\r\n", "\n"),
            "redistribution": (
                "MIT: copying, modifying and distributing the library's data or a table derived "
                "from it is permitted provided the copyright and permission notice above is kept; "
                "it is reproduced here for that reason."
            ),
        },
        "generator": "scripts/kinship_table.py (with scripts/kinship_table.mjs)",
        "rules": {
            "max_hops": MAX_HOPS,
            "max_chars": MAX_CHARS,
            "gender": "m/f from the last hop of every reading; null when readings disagree",
            "generation": "+1 per f/m hop, -1 per s/d hop; null when readings disagree",
            "canonical": "first term (library order) among those with the same set of chains",
            "origin": "data: in relationship.data; rank: 几-template with a birth rank; "
            "cousin: bare 表 read as 姑表 or 舅表",
            "checked": "derived terms are kept only when relationship({text}) answers them",
            "longer_readings": "how many readings of more than max_hops hops were left out",
            "child_calls": "relationship({text, target: '孩子', sex}) keyed by speaker gender, "
            "asked once per relation; empty when the library gives nothing or the term has "
            "longer readings (the answer would mix them in)",
            "register": "the library does not mark literary or archaic terms; none are dropped",
        },
    }


def render(doc: dict[str, Any], terms: dict[str, dict[str, Any]]) -> str:
    """Header indented, one term per line."""
    head = json.dumps(doc, ensure_ascii=False, indent=1)[:-2]
    lines = [
        f" {json.dumps(t, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
        for t, v in terms.items()
    ]
    return head + ',\n "terms": {\n' + ",\n".join(lines) + "\n }\n}\n"


def build(lib_dir: Path) -> str:
    if shutil.which("node") is None:
        sys.exit("node is needed to read relationship.js")
    dump = node("dump", lib_dir)
    return render(header(dump), entries(dump, lib_dir))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib-dir", type=Path, default=Path("/tmp/kin"))
    parser.add_argument("--install", action="store_true", help="npm install the library if absent")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    args = parser.parse_args()
    ensure_library(args.lib_dir, args.install)
    text = build(args.lib_dir)
    if args.check:
        same = args.out.exists() and args.out.read_text() == text
        print(f"{args.out}: {'up to date' if same else 'differs from a fresh build'}")
        sys.exit(0 if same else 1)
    args.out.write_text(text)
    print(f"{args.out}: {text.count(chr(10)) - 1} lines")


if __name__ == "__main__":
    main()
