"""The ``hearth`` command line (typer): the root command and its sub-apps, one module each."""

from __future__ import annotations

import os
import sys

import typer

from config.settings import SettingsError
from server.cli.common import configuration_error
from server.cli.devices import device_app
from server.cli.jobs import jobs_app
from server.cli.memory import memory_app
from server.cli.models import models_app
from server.cli.mounts import mount_offered
from server.cli.persons import persons_app
from server.cli.run import run_app
from server.cli.tokens import api_key_app, console_app, mcp_app
from server.cli.voices import voices_app

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Hearth voice-device server")
app.registered_commands += run_app.registered_commands
for sub, name in (
    (device_app, "device"), (models_app, "models"), (None, "bench"), (memory_app, "memory"),
    (jobs_app, "jobs"), (api_key_app, "api-key"), (mcp_app, "mcp"), (console_app, "console"),
    (persons_app, "persons"), (voices_app, "voices"),
):  # fmt: skip
    if sub is None:  # offered by a package above server (bench/), through its entry point
        mount_offered(app, name)
    else:
        app.add_typer(sub, name=name)


def main() -> None:
    # what Hearth writes (data folder, logs, spool, secrets, sockets' files) is the running
    # user's alone unless a mode says otherwise
    os.umask(0o077)
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except SettingsError as exc:  # raised outside settings_or_exit/run_async (a store open)
        sys.exit(configuration_error(exc).exit_code)
