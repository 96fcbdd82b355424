"""Network-facing processes: device WebSocket server, HTTP (OTA, health, metrics), CLI."""
