"""The exceptions ikigai raises for expected, user-facing failures."""

from __future__ import annotations


class IkigaiError(Exception):
    """An expected failure: the CLI prints its message on one line, no traceback.

    ``exit_code`` is what the CLI exits with (1 for a failed operation, 2 for a
    usage error).
    """

    exit_code = 1


class UsageError(IkigaiError):
    """The user asked for something that cannot be (unknown name, bad option)."""

    exit_code = 2


class ConfigError(IkigaiError):
    """A configuration or state file under ``$IKIGAI_HOME`` cannot be used."""


class PluginError(IkigaiError):
    """A plugin is broken or two plugins claim the same name."""


class ProviderError(IkigaiError):
    """A provider request failed: bad key, bad request, unreachable server, ..."""


class KeyRejected(ProviderError):
    """The provider refused the API key that was sent (HTTP 401, or its own sign of a bad
    key): a session says so for a key ``ikigai keys`` stored (``keys.stored_key_rejected``).

    :param status: the HTTP status the provider answered.
    """

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class ContextTooLong(ProviderError):
    """The provider refused a request as longer than the model's context window."""
