"""Adapters to engines, each behind a small typed interface chosen by configuration."""
