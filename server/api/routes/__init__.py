"""The memory API's routes, one module per resource."""
