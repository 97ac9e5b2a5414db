"""web_fetch: one module per job (guard, client, decoding, extraction, robots, cache, tool)."""
