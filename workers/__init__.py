"""arq worker and the jobs that run after a device disconnects (the write path)."""
