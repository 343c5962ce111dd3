"""The routes of `memlake serve`, one router per group: the service's health and agents, the memory reads, the
writes (remember, reject, forget), the memory tools, and ingest. The OpenAI-compatible proxy is `service.proxy`."""
