"""The memory API fixture, shared with tests/server/api."""

from tests.server.api.conftest import api  # noqa: F401
