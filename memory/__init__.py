"""The memory core both processes share (the device server and the write-path worker): the
memory record and its payload schema, the store protocol with its embedded (Qdrant Edge) and
Qdrant-server adapters, entities, the per-person lock and the JSONL importer."""
