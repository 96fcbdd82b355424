"""Benchmarks and the end-to-end bench; each prints figures, none is a timed unit test."""
