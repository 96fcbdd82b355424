"""Household memory: payload schema, store, read path (recall + rendering), check_safety."""
