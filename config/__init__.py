"""Hearth configuration: settings models (``config.settings``), sources, secrets, Redis keys.

Nothing is imported here: ``config.peek`` must stay importable without pydantic."""
