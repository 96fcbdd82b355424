"""Hearth configuration: settings models, sources and secrets."""

from config.settings import HearthSettings, SettingsError, load_settings

__all__ = ["HearthSettings", "SettingsError", "load_settings"]
