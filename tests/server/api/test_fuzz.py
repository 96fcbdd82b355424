"""Fuzz the API from its own OpenAPI document with schemathesis: no input may cause a 5xx."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from tests.server.api.conftest import Api

SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")


async def test_no_server_errors_from_fuzzing(api: Api, tmp_path: Path) -> None:
    await api.ok("POST", "speakers", {"user_id": "alice", "speaker": "Bob"})
    process = await asyncio.create_subprocess_exec(
        str(SCHEMATHESIS), "run", f"{api.base_url}/api/v1/openapi.json",
        "--header", f"X-API-Key: {api.workspace}",
        "--checks", "not_a_server_error",
        "--max-examples", "40", "--seed", "7", "--request-timeout", "20",
        "--report", "junit", "--report-dir", str(tmp_path),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    output, _ = await asyncio.wait_for(process.communicate(), timeout=600)
    text = output.decode(errors="replace")
    assert process.returncode == 0, text[-6000:]
    assert "not_a_server_error" in text or "passed" in text.lower()
