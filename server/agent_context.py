"""``hearth-agent-context``: the memory block for a coding agent's prompt hook.

A UserPromptSubmit-style hook runs it on every prompt with the prompt on stdin (plain text, or
the hook's JSON with a ``prompt`` field) and adds what it prints to the agent's context: the same
read path a device turn runs, for ``mcp.agent_person`` (or ``--person``), through the running
server's admin API. It must never block or break a prompt: no server, an error, or a slow answer
(over ``--timeout``) prints nothing and exits 0, with the reason on stderr. Imports are kept few
(no pydantic, no httpx: ~0.1 s instead of ~0.8 s per prompt), since it starts for every prompt.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

from config.run_files import admin_url_file, read_agent_pointer


def prompt_from(raw: str) -> str:
    text = raw.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(data, dict) and isinstance(data.get("prompt"), str):
            return str(data["prompt"]).strip()
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hearth-agent-context", description=__doc__)
    parser.add_argument("--person", help="whose memory (default: mcp.agent_person)")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds before giving up")
    args = parser.parse_args(argv)

    # Only the user's own environment and the pointer their running Hearth published — never
    # ./hearth.yaml or ./data in the working directory (a cloned repository controls those).
    pointer = read_agent_pointer()
    where = os.environ.get("HEARTH_DATA_DIR") or pointer.get("data_dir")
    person = (
        args.person or os.environ.get("HEARTH_MCP__AGENT_PERSON") or pointer.get("agent_person")
    )
    prompt = prompt_from(sys.stdin.read())[:2000]
    if not where or not person or not prompt:
        why = "empty prompt"
        if not person:
            why = "no person configured (mcp.agent_person)"
        if not where:
            why = "no running Hearth published for this user (start hearth up)"
        print(f"hearth-agent-context: no memory injected ({why})", file=sys.stderr)
        return 0
    data_dir = Path(str(where))
    try:
        # config.secrets is read directly (it imports more)
        base = admin_url_file(data_dir).read_text().strip()
        token = (data_dir / "secrets" / "admin_token").read_text().strip()
        request = urllib.request.Request(
            f"{base}/admin/memory/recall",
            data=json.dumps({"person": person, "question": prompt}).encode(),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            block = str(json.loads(response.read()).get("prompt_block", ""))
    except (OSError, urllib.error.URLError, ValueError) as exc:
        print(f"hearth-agent-context: no memory injected ({exc})", file=sys.stderr)
        return 0
    if block:
        sys.stdout.write(block + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
