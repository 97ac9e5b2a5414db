"""The provider protocol, and the installed providers indexed by name.

Core code never names a provider: they come from plugins through the
``ikigai_provider_serializers`` hook (each provider distribution registers one
through the ``ikigai`` entry-point group).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Protocol, Sequence

from ikigai_core.errors import PluginError, UsageError
from ikigai_core.hookcall import collect
from ikigai_core.notices import Notices

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.conversation import AssistantMessage, Conversation, TextDelta
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.tools import Tool


INSTALL_HINT = (
    "A provider is a plugin distribution installed next to ikigai (`ikigai plugins` lists "
    "them); from a checkout of ikigai: pip install -e ikigai_providers/NAME"
)
"""How to get a provider: names like ``ikigai-provider-NAME`` are not on PyPI (anyone could
register them), so the hint points to what is installed and to the checkout's folders."""


@dataclass(frozen=True)
class ProviderRequest:
    """One HTTP POST to a provider: where, with which headers (holding the key), what body."""

    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


class ProviderSerializer(Protocol):
    """What a provider plugin implements: schema transformation and wire format.

    Everything here is pure (no network): ikigai's transport sends the request,
    retries, and hands the parsed body or the server-sent events back.
    """

    name: str
    """Unique provider name users pass to ``--provider``."""
    default_model: str
    """The model used when the user names none."""
    api_key_env: Sequence[str]
    """Environment variables holding the API key, most preferred first."""
    base_url_env: str
    """Environment variable overriding the API's base URL (named when it cannot be reached)."""

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """Translate one registry tool into this provider's tool declaration."""
        ...

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """Build the JSON body for the next model turn (no key in it)."""
        ...

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """Where to POST ``body``, and with which headers."""
        ...

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """Read a non-streamed response body into one assistant turn."""
        ...

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | AssistantMessage]:
        """Read a stream: yield text as it arrives, then the whole assistant turn last."""
        ...

    def error_message(self, status: int, body: bytes, *, model: str, key_env: str) -> str:
        """One line for an HTTP error status: what went wrong and what to do.

        ``key_env`` is the variable the key was read from, to name when it is rejected.
        """
        ...

    def prepare_arguments(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Undo what ``tool_schema`` changed in the arguments the model sent (OpenAI: nulls)."""
        ...


PROVIDER_ATTRIBUTES = ("name", "default_model", "api_key_env", "base_url_env")
PROVIDER_METHODS = ("tool_schema", "request_body", "http_request", "parse_response",
                    "parse_stream", "error_message", "prepare_arguments")


def provider_problem(provider: Any) -> str | None:
    """What ``provider`` lacks of the :class:`ProviderSerializer` protocol, if anything."""
    kind = type(provider).__name__
    missing = [a for a in PROVIDER_ATTRIBUTES if not hasattr(provider, a)]
    missing += [f"{m}()" for m in PROVIDER_METHODS if not callable(getattr(provider, m, None))]
    if missing:
        return f"provider {kind} lacks {', '.join(missing)} of the provider protocol"
    if not isinstance(provider.name, str) or not provider.name:
        return f"provider {kind} has no name (a non-empty str)"
    return None


def collect_providers(
    pm: pluggy.PluginManager, notices: Notices | None = None
) -> dict[str, ProviderSerializer]:
    """Every installed provider by name, sorted. Two plugins with one name are an error;
    a plugin that raises or gives an incomplete provider is reported and skipped."""
    found: dict[str, ProviderSerializer] = {}
    owner: dict[str, str] = {}
    notices = Notices() if notices is None else notices
    for plugin, provider in collect(pm, "ikigai_provider_serializers", notices, provider_problem):
        if provider.name in found:
            raise PluginError(
                f"Provider name '{provider.name}' is registered by both "
                f"'{owner[provider.name]}' and '{plugin}'. "
                f"Uninstall one or block it with IKIGAI_DISABLE_PLUGINS={plugin}"
            )
        found[provider.name] = provider
        owner[provider.name] = plugin
    return dict(sorted(found.items()))


def get_provider(
    pm: pluggy.PluginManager, name: str, notices: Notices | None = None
) -> ProviderSerializer:
    """The provider called ``name``, or a usage error listing the installed ones."""
    providers = collect_providers(pm, notices)
    try:
        return providers[name]
    except KeyError:
        installed = ", ".join(providers) or "none"
        raise UsageError(
            f"Unknown provider '{name}'. Installed providers: {installed}. {INSTALL_HINT}"
        ) from None
