"""MCP: Hearth as an MCP server (person-bound tokens, the agent and device endpoints, stdio)
and as the MCP client of a device's own tools."""
