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
