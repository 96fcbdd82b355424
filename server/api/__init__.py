"""The memory HTTP API (seeds 000 and 002): stores, speakers, store/search, idempotency."""
