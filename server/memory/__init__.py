"""What only the device server does with memory: the read path (recall + rendering), the
check_safety tool, and the engine that wires them to the core in ``memory/``."""
