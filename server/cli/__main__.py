"""``python -m server.cli``."""

from server.cli import main

main()
