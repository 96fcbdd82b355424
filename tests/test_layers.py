"""The architecture, held by a test: dependencies run one way between the top-level packages,
``config`` ← ``providers`` ← ``memory`` ← ``workers`` ← ``server`` ← ``bench``, and no two
modules import each other, even through imports inside functions (which hid three circles
before the memory core was restructured). No arrow runs up: the root command line mounts
``hearth bench`` through the ``hearth.commands`` entry point (server/cli/mounts.py).

Inside ``server/`` each sub-package is one part (its own modules may import each other) and so
is each top-level module; the parts import one way, each only parts drawn below it::

    cli                      the command line
     │
    runtime ─► http_app ─► admin, api, console, vision
     │
    device                   a device's session and its turns
     │
    mcp                      Hearth as an MCP server; the client of a device's MCP tools
     │
    memory                   the read path, check_safety, the engine
     │
    tools ─► traces          a server tool and the turn calling it; what the turn did
     │         │
    understanding            a question understood once (Question: its relations, scope,
                             safety topics, slots, times, what it asks), the lookup's and the
                             constraint families' words, what a sentence states (grounding)

    protocol, auth, devices, persons, metrics, logs, …: small parts below those using them
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ["config", "providers", "memory", "workers", "server", "bench"]


def _modules() -> dict[str, Path]:
    found = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path, module: str, known: dict[str, Path]) -> set[str]:
    """Every project module ``module`` imports, at any depth of the file (functions included)."""
    tree = ast.parse(path.read_text())
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    return targets


def _graph() -> dict[str, set[str]]:
    known = _modules()
    return {module: _imports(path, module, known) for module, path in known.items()}


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_no_package_imports_a_layer_above_it() -> None:
    upward = sorted(
        (module, target)
        for module, targets in _graph().items()
        for target in targets
        if _layer(target) > _layer(module)
    )
    assert upward == [], "imports that reach up a layer:\n" + "\n".join(
        f"  {m} -> {t}" for m, t in upward
    )


def _server_part(module: str) -> str:
    """The part of server/ ``module`` belongs to: its sub-package (``server.device`` for
    ``server.device.turn``), else the module itself (``server.tools``)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "server" else module


def _server_parts_graph() -> dict[str, set[str]]:
    parts: dict[str, set[str]] = {}
    for module, targets in _graph().items():
        if module.split(".")[0] != "server":
            continue
        part = _server_part(module)
        parts.setdefault(part, set()).update(
            _server_part(target)
            for target in targets
            if target.split(".")[0] == "server" and _server_part(target) != part
        )
    return parts


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components: a component of more than one node is a circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_no_import_circles_between_modules() -> None:
    circles = _circles(_graph())
    assert circles == [], "import circles:\n" + "\n".join(f"  {c}" for c in circles)


def test_no_import_circles_between_the_parts_of_server() -> None:
    circles = _circles(_server_parts_graph())
    assert circles == [], "import circles between parts of server/:\n" + "\n".join(
        f"  {c}" for c in circles
    )


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_question_understanding_sits_below_the_memory_and_the_device() -> None:
    """The question, understood once, is taken by the read path, the lookup and the reply checks
    alike: ``server.understanding`` reaches neither of them, even through another part."""
    above = _reachable(_server_parts_graph(), "server.understanding")
    assert not above & {"server.memory", "server.device", "server.mcp"}, sorted(above)
    assert "server.memory.question" not in _modules()  # one home for it, no second door


def test_the_graph_is_really_read() -> None:
    graph = _graph()
    assert "memory.writes" in graph["server.api.service"]
    assert "server.cli.common" in graph["bench.cli"]  # bench's arrow down is seen
    assert "workers.contract" in graph["server.device.session_end"]


def test_the_parts_of_server_are_really_read() -> None:
    parts = _server_parts_graph()
    assert "server.memory" in parts["server.device"]
    assert "server.understanding" in parts["server.memory"]
    assert "server.understanding" in parts["server.device"]  # the question, read once
    assert "server.tools" in parts["server.mcp"]
    assert "server.device.turn" not in parts  # a sub-package's modules are one part
