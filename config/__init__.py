"""Hearth configuration: settings models (``config.settings``), sources, secrets, Redis keys.

Nothing is imported here: ``config.run_files`` must stay importable without pydantic (the agent
hook imports it on every prompt)."""
