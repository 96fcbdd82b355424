"""The xiaozhi device protocol as a sans-I/O state machine (see shared/docs/device-protocol.md)."""
