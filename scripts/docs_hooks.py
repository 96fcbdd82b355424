"""MkDocs hooks (mkdocs.yml ``hooks:``): the pages generated at build time from their one home.

- ``<!-- openapi -->`` in a page becomes the memory API reference, rendered from the OpenAPI
  document the FastAPI app itself produces; the document is also published as
  ``api/openapi.json`` in the built site.
- ``<!-- results: BENCH -->`` becomes the table of that bench's current results, read from
  ``docs/benchmarks/results.json`` (figure, value, command, machine, date).

Nothing is written into ``docs/``: the build reads the sources and writes only the site."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "benchmarks" / "results.json"
METHODS = ("get", "post", "put", "patch", "delete")


@cache
def openapi() -> dict[str, Any]:
    """The memory API's OpenAPI document, as ``GET /api/v1/openapi.json`` serves it. Building
    the FastAPI app needs no Redis or store: the state is only read by requests."""
    from server.api.app import _api

    document: dict[str, Any] = _api(SimpleNamespace()).openapi()  # type: ignore[arg-type]
    return document


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if "<!-- openapi -->" in markdown:
        markdown = markdown.replace("<!-- openapi -->", render_openapi(openapi()))
    return re.sub(r"<!-- results: ([a-z0-9]+) -->", lambda m: results_table(m.group(1)), markdown)


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    content = json.dumps(openapi(), ensure_ascii=False, indent=1)
    files.append(File.generated(config, "api/openapi.json", content=content))
    return files


def results_table(bench: str) -> str:
    rows = [r for r in json.loads(RESULTS.read_text())["results"] if r["bench"] == bench]
    if not rows:
        raise ValueError(f"docs/benchmarks/results.json has no results for {bench!r}")
    lines = ["| figure | result | command | machine | date |", "|---|---|---|---|---|"]
    for r in rows:
        cells = [r["figure"], r["value"], f"`{r['command']}`", r["machine"], r["date"]]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines)


def render_openapi(doc: dict[str, Any]) -> str:
    out = [f"Version {doc['info']['version']} of *{doc['info']['title']}*. "
           "The same document as JSON: [openapi.json](openapi.json)."]  # fmt: skip
    schemas = doc.get("components", {}).get("schemas", {})
    for path, item in doc["paths"].items():
        for method in METHODS:
            if method in item:
                out.append(_operation(method, path, item[method], schemas))
    return "\n\n".join(out)


def _operation(method: str, path: str, op: dict[str, Any], schemas: dict[str, Any]) -> str:
    parts = [f"## `{method.upper()} {path}`"]
    if op.get("summary"):
        parts.append(f"**{op['summary']}**")
    if op.get("description"):
        parts.append(op["description"].strip())
    params = [p for p in op.get("parameters", []) if p.get("in") != "header" or p["name"]]
    if params:
        rows = ["| parameter | in | required | type |", "|---|---|---|---|"]
        for p in params:
            kind = _type(p.get("schema", {}), schemas)
            rows.append(f"| `{p['name']}` | {p['in']} | {_yes(p.get('required'))} | {kind} |")
        parts.append("\n".join(rows))
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    if body:
        parts.append("Request body: " + _type(body.get("schema", {}), schemas))
        parts.append(_fields(body.get("schema", {}), schemas))
    answers = [f"`{code}` {r.get('description', '')}" for code, r in op["responses"].items()]
    parts.append("Answers: " + "; ".join(answers) + ".")
    return "\n\n".join(p for p in parts if p)


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return schemas[ref.rsplit("/", 1)[1]] if ref else schema


def _type(schema: dict[str, Any], schemas: dict[str, Any]) -> str:
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[1]}`"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_type(s, schemas) for s in schema[key])
    if schema.get("type") == "array":
        return f"array of {_type(schema.get('items', {}), schemas)}"
    return f"`{schema.get('type', 'any')}`"


def _fields(schema: dict[str, Any], schemas: dict[str, Any]) -> str:
    resolved = _resolve(schema, schemas)
    properties = resolved.get("properties", {})
    if not properties:
        return ""
    required = set(resolved.get("required", []))
    rows = ["| field | type | required | default |", "|---|---|---|---|"]
    for name, field in properties.items():
        default = json.dumps(field["default"], ensure_ascii=False) if "default" in field else ""
        default = default and f"`{default}`"
        cells = [f"`{name}`", _type(field, schemas), _yes(name in required), default]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def _yes(flag: Any) -> str:
    return "yes" if flag else ""
