"""The variables the audit plugin reads, in a module of their own so that the hooks and
the command can both import them without importing each other."""

LOG_ENV = "IKIGAI_AUDIT_LOG"
"""The file every tool call is appended to, one JSON line each."""
DENY_ENV = "IKIGAI_AUDIT_DENY"
"""Comma-separated tool names the model may not call."""
