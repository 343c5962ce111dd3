"""`memlake serve` and `memlake mcp`: the HTTP API, the OpenAI-compatible proxy and the MCP server, thin shells
over `memlake.api.Memory`. The core (`memlake/`) never imports this package or its web frameworks."""
