"""``schema.DERIVATION`` must change when what ``derived`` makes changes: a store re-derives its
memories only when the version differs, so a rule change without a bump would never reach the
memories already stored."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from memory import schema
from memory.schema import PersonId

ROOT = Path(__file__).resolve().parents[2]
# DERIVATION → the fingerprint of what it derives from the texts below. Changed a rule in
# memory/slot_kinds.py or memory/when.py and this test fails? Bump schema.DERIVATION and record
# the new fingerprint under it (the message says which).
FINGERPRINTS = {"1": "e8b8148c2e2378c6", "2": "b6e60392d53dd301", "3": "f4c926df39390b4c"}


def _texts() -> list[str]:
    snapshot = yaml.safe_load((ROOT / "bench/data/e2e/snapshot.yaml").read_text())
    texts = [str(m["text"]) for m in snapshot["memories"]]
    for path in sorted((ROOT / "tests/fixtures").glob("*.jsonl")):
        texts += [json.loads(line)["text"] for line in path.read_text().splitlines() if line]
    return texts


def fingerprint() -> str:
    derived = []
    for text in _texts():
        payload = schema.derived(PersonId("p"), {schema.TEXT: text, schema.ENTITIES: ["x"]})
        derived.append([text, *(payload[k] for k in schema.DERIVED_FIELDS)])
    blob = json.dumps(derived, ensure_ascii=False, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def test_the_derivation_version_changes_with_what_it_derives() -> None:
    assert len(_texts()) > 50
    found = fingerprint()
    assert FINGERPRINTS.get(schema.DERIVATION) == found, (
        f"what `derived` makes changed: bump schema.DERIVATION and record {found!r} for it "
        "in FINGERPRINTS (stores then re-derive their memories when they open)"
    )
