"""The provider base class, and the installed providers indexed by name.

Core code never names a provider: they come from plugins through the
``ikigai_provider_serializers`` hook (each provider distribution registers one
through the ``ikigai`` entry-point group).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

from ikigai_core.conversation import ToolResultsMessage, UsageKeys, UserMessage
from ikigai_core.errors import PluginError, UsageError
from ikigai_core.hookcall import collect
from ikigai_core.notices import Notices
from ikigai_core.record import Record
from ikigai_core.wire import (
    TurnBuilder,
    base_url,
    http_error_message,
    load_object,
    stream_error,
    stream_incomplete,
)

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.attachments import Attachment
    from ikigai_core.conversation import (
        AssistantMessage,
        Conversation,
        TextDelta,
        ThinkingDelta,
        ToolResult,
    )
    from ikigai_core.sse import ServerSentEvent
    from ikigai_core.tools import Tool

REASONING_EFFORTS = ("low", "medium", "high")
"""How hard a model may think (``--reasoning``); each provider maps them to its API."""
STREAM_FRAMINGS = ("sse", "ndjson")
"""How a provider's stream is cut into events: server-sent events or one JSON per line."""


INSTALL_HINT = (
    "A provider is a plugin distribution installed next to ikigai (`ikigai plugins` lists "
    "them); from a checkout of ikigai: pip install -e ikigai_providers/NAME"
)
"""How to get a provider: names like ``ikigai-provider-NAME`` are not on PyPI (anyone could
register them), so the hint points to what is installed and to the checkout's folders."""


def token_count(value: Any) -> int | None:
    """A token count from a model listing: a positive integer, else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class ProviderRequest(Record):
    """One HTTP POST to a provider: where, with which headers (holding the key), what body."""

    url: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]


class ToolFit(Record):
    """How one tool goes to one provider: as is, rewritten (and how), or left out (and why).

    :param tool: the tool's name.
    :param declaration: what the request carries for the tool; ``None`` when it is left out.
    :param changes: what was rewritten so the provider's API accepts it, one line each.
    :param reason: why the tool is left out (one line), when it is.
    """

    tool: str
    declaration: Mapping[str, Any] | None
    changes: tuple[str, ...] = ()
    reason: str | None = None

    @classmethod
    def checked(cls, tool: str, declaration: Mapping[str, Any], changes: Sequence[str],
                problems: Sequence[str]) -> ToolFit:
        """``declaration`` if the provider's rules found no ``problems`` in it; else the tool
        left out, the reason naming the first few problems."""
        if not problems:
            return cls(tool, declaration, tuple(changes))
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        return cls(tool, None, reason="; ".join(problems[:3]) + more)

    @property
    def status(self) -> str:
        """``as is``, ``rewritten`` or ``excluded``."""
        if self.declaration is None:
            return "excluded"
        return "rewritten" if self.changes else "as is"


class FitCache:
    """One provider's :class:`ToolFit` of each tool object, kept while the tool lives.

    A turn asks for its tools' fits three times (the tools offered, the request's
    declarations, the context estimate), and every sub-agent of a tree shares its root's
    tools and provider: fitting is schema work that holds the interpreter, done once per
    tool instead. Keyed by identity (a rediscovered tool is a new object, fitted anew);
    thread-safe, a race at worst fits a tool twice.
    """

    def __init__(self) -> None:
        self._fits: dict[int, tuple[weakref.ref[Tool], ToolFit]] = {}

    def get(self, tool: Tool, fit: Callable[[Tool], ToolFit]) -> ToolFit:
        """``tool``'s fit, made with ``fit`` the first time."""
        key = id(tool)
        kept = self._fits.get(key)
        if kept is not None and kept[0]() is tool:
            return kept[1]
        found = fit(tool)
        # the entry goes with its tool (before its id can be another object's)
        self._fits[key] = (weakref.ref(tool, lambda _: self._fits.pop(key, None)), found)
        return found


class Provider:
    """The base of every provider: declare its parts, write only its wire shapes.

    A subclass sets the class attributes below and writes its API's own JSON:
    :meth:`tool_schema` (or :meth:`fit_tool`, to rewrite or leave out what its API
    rejects) and :meth:`request_body`, where :meth:`wire_messages` turns the conversation
    into messages through :meth:`user_entry`, :meth:`assistant_entry` and
    :meth:`result_entries`; and :meth:`read_event`, which reads one stream event (and by
    default a whole reply) into a :class:`~ikigai_core.wire.TurnBuilder`. Everything
    here is pure (no network): ikigai's transport builds the request with
    :meth:`http_request`, sends it, retries, and hands back the parsed body or the
    stream's events (cut by :attr:`stream_framing`).
    """

    name: ClassVar[str]
    """Unique provider name users pass to ``--provider``; every error line says it."""
    default_model: ClassVar[str]
    """The model used when the user names none."""
    base_url_env: ClassVar[str]
    """Environment variable overriding the API's base URL (named when it cannot be reached)."""
    default_base_url: ClassVar[str]
    """The base URL when :attr:`base_url_env` is not set."""
    path: ClassVar[str]
    """Appended to the base URL; ``{model}`` in it is replaced by the URL-quoted model."""
    stream_path: ClassVar[str | None] = None
    """The path of a streamed request, when it differs from :attr:`path`."""
    model_prefix: ClassVar[str] = ""
    """Taken off the front of a model name before it goes in the path (Gemini lists its
    models as ``models/NAME``)."""
    api_key_env: ClassVar[Sequence[str]] = ()
    """Environment variables that may hold the API key, most preferred first (or none)."""
    key_required: ClassVar[bool] = True
    """Whether the default base URL needs a key. A base URL set in :attr:`base_url_env`
    never does: a local server (llama.cpp, vLLM, Ollama, LM Studio) works without one."""
    auth_header: ClassVar[str] = "Authorization"
    """The header carrying the key."""
    auth_prefix: ClassVar[str] = "Bearer "
    """What comes before the key in :attr:`auth_header` (``""`` for a bare key)."""
    key_rejected_marker: ClassVar[bytes | None] = None
    """Text in a 400 answer's body that means the key was rejected (Gemini:
    ``API_KEY_INVALID``); a 401 always does."""
    headers: ClassVar[Mapping[str, str]] = {}
    """Extra headers sent with every request (an API version, say)."""
    stream_framing: ClassVar[str] = "sse"
    """``"sse"`` (server-sent events) or ``"ndjson"`` (each line one event's data)."""
    stream_done: ClassVar[str | None] = None
    """An event whose data is this text (not JSON) ends the stream (OpenAI: ``[DONE]``)."""
    stream_end: ClassVar[str] = "its last event"
    """What ends a complete stream, as the error for a stream cut short names it."""
    settings_env: ClassVar[Mapping[str, str]] = {}
    """The provider's own settings, each with the environment variable it is read from
    (``{"wire": "OPENAI_WIRE"}``): ``providers.NAME.KEY`` in config.json sets the
    variable for this provider's requests unless it is set already
    (:func:`provider_environ`)."""
    usage_keys: ClassVar[tuple[str, str] | UsageKeys] = ("input_tokens", "output_tokens")
    """Where the API's usage object holds the token counts: the input and output counts'
    names, or a :class:`~ikigai_core.conversation.UsageKeys` that also names the prompt
    cache's reads and writes."""
    system_role: ClassVar[str | None] = None
    """When set, the system prompt goes first among the messages, as
    ``{"role": system_role, "content": prompt}`` (OpenAI: ``"system"``); else the body
    holds it elsewhere (:meth:`request_body` puts it there)."""
    merge_key: ClassVar[str | None] = None
    """When set, consecutive messages of one role become one, their lists under this key
    joined (Anthropic wants roles to alternate: ``"content"``)."""
    models_path: ClassVar[str | None] = None
    """Appended to the base URL to list the API's models with a GET (``ikigai models``);
    ``None``: the API lists none, only :attr:`known_models` are shown."""
    image_types: ClassVar[Sequence[str]] = ()
    """The image types (``image/png``...) a user's message may attach; ``()``: the API takes
    none, and a prompt with an image is refused before it is sent."""
    context_too_long: ClassVar[tuple[bytes, ...]] = (
        b"context_length_exceeded",  # OpenAI: error.code, Chat Completions and Responses
        b"prompt is too long",  # Anthropic: "prompt is too long: 208310 tokens > 200000 maximum"
        b"exceeds the maximum number of tokens",  # Gemini: "The input token count (N) exceeds
        # the maximum number of tokens allowed (M)."
        b"maximum context length",  # vLLM and other OpenAI-compatible servers
        b"exceeds the available context size",  # llama.cpp's server
    )
    """Text in a 400 answer's body that means the request was longer than the model's
    context window (:class:`~ikigai_core.errors.ContextTooLong`: a session compacts and
    asks again)."""
    known_models: ClassVar[Mapping[str, int | None]] = {}
    """Models known without asking, each with its context window in tokens (``None``:
    unknown): shown when the listing cannot be read, and filling in the windows it omits."""

    def read_models(self, body: Any) -> dict[str, int | None]:
        """The models in the listing's JSON ``body`` with their context windows where it
        gives them. The default reads ``{"data": [{"id": ..., "max_input_tokens": ...}]}``
        (OpenAI's and Anthropic's shape); anything else is a ``ValueError``."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise ValueError("the model list holds no 'data' list")
        return {entry["id"]: token_count(entry.get("max_input_tokens")) for entry in data
                if isinstance(entry, dict) and isinstance(entry.get("id"), str)}

    # -- Tools -----------------------------------------------------------------

    def tool_schema(self, tool: Tool) -> dict[str, Any]:
        """Translate one registry tool into this provider's tool declaration (used by the
        default :meth:`fit_tool`)."""
        raise NotImplementedError

    def fit_tool(self, tool: Tool) -> ToolFit:
        """One registry tool as this provider's API accepts it: its declaration, what had to
        be rewritten, or why it cannot be sent (then every other tool still goes).

        By default :meth:`tool_schema`'s declaration, as is.
        """
        return ToolFit(tool.name, self.tool_schema(tool))

    def fit_tools(self, tools: Iterable[Tool]) -> list[ToolFit]:
        """:meth:`fit_tool` for each of ``tools``, in order, each tool object fitted once
        (:class:`FitCache`): a :meth:`fit_tool` depends on the tool alone."""
        fits = self._fit_cache
        return [fits.get(tool, self.fit_tool) for tool in tools]

    @cached_property
    def _fit_cache(self) -> FitCache:
        return FitCache()

    def declarations(self, tools: Iterable[Tool]) -> list[Mapping[str, Any]]:
        """The declarations of the tools this provider accepts, in order (for
        :meth:`request_body`: a tool left out never breaks the request)."""
        return [fit.declaration for fit in self.fit_tools(tools) if fit.declaration is not None]

    def prepare_arguments(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Undo what :meth:`fit_tool` changed in the model's arguments (OpenAI: nulls)."""
        return dict(arguments)

    # -- The request -----------------------------------------------------------

    def request_body(
        self, conversation: Conversation, tools: Sequence[Tool], *, model: str, stream: bool
    ) -> dict[str, Any]:
        """Build the JSON body for the next model turn (no key in it)."""
        raise NotImplementedError

    def wire_messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        """The conversation as the API's list of messages, oldest first: the system
        prompt (see :attr:`system_role`), then one :meth:`user_entry`,
        :meth:`assistant_entry` or :meth:`result_entries` per message (see
        :attr:`merge_key`). An assistant turn with neither text nor calls is left out:
        every API rejects an empty one."""
        entries: list[dict[str, Any]] = []
        for message in conversation.messages:
            if isinstance(message, UserMessage):
                new = [self.user_entry(message.text, message.images) if message.images
                       else self.user_entry(message.text)]
            elif isinstance(message, ToolResultsMessage):
                new = self.result_entries(message.results)
            elif message.text or message.tool_calls:
                new = [self.assistant_entry(message)]
            else:
                continue
            for entry in new:
                key = self.merge_key
                if key and entries and entries[-1]["role"] == entry["role"]:
                    entries[-1][key].extend(entry[key])
                else:
                    entries.append(entry)
        if self.system_role and conversation.system:
            entries.insert(0, {"role": self.system_role, "content": conversation.system})
        return entries

    def user_entry(self, text: str, images: Sequence[Attachment] = ()) -> dict[str, Any]:
        """One message holding text the user typed, and the images attached (only ever
        given to a provider with :attr:`image_types`); by default the chat form most APIs
        share, ``{"role": "user", "content": text}``, with images as ``image_url`` parts
        holding a ``data:`` URL after the text (OpenAI's and the servers speaking its
        wire)."""
        if not images:
            return {"role": "user", "content": text}
        return {"role": "user", "content": [{"type": "text", "text": text}, *(
            {"type": "image_url", "image_url": {"url": data_url(image)}} for image in images)]}

    def takes_images(self, model: str) -> bool:
        """Whether ``model`` reads images in a user's message (checked before they are
        sent); by default whether the provider takes any (:attr:`image_types`)."""
        return bool(self.image_types)

    def assistant_entry(self, message: AssistantMessage) -> dict[str, Any]:
        """One model turn as a message (from its ``raw`` form when it has one)."""
        raise NotImplementedError

    def result_entries(self, results: Sequence[ToolResult]) -> list[dict[str, Any]]:
        """The results of one turn's tool calls, as one or more messages."""
        raise NotImplementedError

    def with_reasoning(self, body: dict[str, Any], effort: str, *, model: str
                       ) -> dict[str, Any]:
        """``body`` asking ``model`` to think with ``effort`` (``low``, ``medium``, ``high``:
        :data:`REASONING_EFFORTS`) in the API's own terms, its thinking shown; a model
        known not to think is a :class:`UsageError` (nothing is sent). By default the
        provider has no such control: a :class:`UsageError`."""
        raise UsageError(f"provider '{self.name}' has no reasoning control; "
                         "leave out --reasoning (or the reasoning setting)")

    def http_request(
        self, body: Mapping[str, Any], *, model: str, stream: bool, api_key: str | None,
        environ: Mapping[str, str],
    ) -> ProviderRequest:
        """``POST {base URL}{path}`` with the key (when there is one) in :attr:`auth_header`."""
        path = self.stream_path if stream and self.stream_path else self.path
        url = base_url(environ, self.base_url_env, self.default_base_url)
        headers = {"Content-Type": "application/json", **self.headers}
        if api_key:
            headers[self.auth_header] = self.auth_prefix + api_key
        if stream and self.stream_framing == "sse":
            headers["Accept"] = "text/event-stream"
        model = quote(model.removeprefix(self.model_prefix), safe="")
        return ProviderRequest(url + path.replace("{model}", model), headers, body)

    def error_message(self, status: int, body: bytes, *, model: str, key_env: str | None) -> str:
        """One line for an HTTP error status: what went wrong and what to do.

        ``key_env`` is the variable the key was read from (``None``: no key was sent),
        to name when the key is rejected or missing.
        """
        return http_error_message(self, status, body, model=model, key_env=key_env,
                                  key_rejected=self.rejects_key(status, body))

    def rejects_key(self, status: int, body: bytes) -> bool:
        """Whether an error answer means the key sent was refused: a 401, or a 400 holding
        :attr:`key_rejected_marker`."""
        marker = self.key_rejected_marker
        return status == 401 or (status == 400 and marker is not None and marker in body)

    # -- The answer ------------------------------------------------------------

    def new_turn(self) -> TurnBuilder:
        """An empty turn reading this API's usage fields (:attr:`usage_keys`)."""
        return TurnBuilder(self.usage_keys)

    def read_event(self, data: dict[str, Any], turn: TurnBuilder) -> bool:
        """Read one stream event's JSON object into ``turn``; true when it ends the turn.

        An event holding ``error`` never comes here (it is the stream's error)."""
        raise NotImplementedError

    def stream_complete(self, turn: TurnBuilder) -> bool:
        """Whether a stream that ended without a last event still holds a whole turn
        (Gemini's ends after a ``finishReason``). By default it does not."""
        return False

    def finish_turn(self, turn: TurnBuilder) -> AssistantMessage:
        """The assistant turn ``turn`` gathered; override to keep the API's own form of
        it in ``raw``."""
        return turn.message()

    def parse_response(self, body: Mapping[str, Any]) -> AssistantMessage:
        """Read a non-streamed response body into one assistant turn; by default the body
        is read as one stream event (:meth:`read_event`)."""
        turn = self.new_turn()
        self.read_event(dict(body), turn)
        return self.finish_turn(turn)

    def parse_stream(
        self, events: Iterable[ServerSentEvent]
    ) -> Iterator[TextDelta | ThinkingDelta | AssistantMessage]:
        """Read a stream: yield text (and thinking) as it arrives, then the whole assistant
        turn last.

        Each event goes to :meth:`read_event` until one ends the turn; an event holding
        ``error`` is the provider's error; a stream that stops before its end
        (:attr:`stream_end`) is incomplete. With ``ndjson`` framing each event's ``data``
        is one line of the body."""
        turn = self.new_turn()
        for event in events:
            done = event.data.strip() == self.stream_done
            if not done:
                data = load_object(self.name, event.data)
                if "error" in data:
                    raise stream_error(self.name, data)
                done = self.read_event(data, turn)
            yield from turn.deltas()
            if done:
                break
        else:
            if not self.stream_complete(turn):
                raise stream_incomplete(self.name, self.stream_end)
        yield self.finish_turn(turn)


def data_url(image: Attachment) -> str:
    """``image`` as a ``data:`` URL (``data:image/png;base64,...``)."""
    return f"data:{image.mime_type};base64,{image.base64}"


def provider_problem(provider: Any) -> str | None:
    """What is wrong with a plugin's ``provider``, if anything."""
    kind = type(provider).__name__
    if not isinstance(provider, Provider):
        return f"provider {kind} is not a subclass of ikigai_core.Provider"
    missing = [part for part in ("name", "default_model", "base_url_env", "default_base_url",
                                 "path") if not isinstance(getattr(provider, part, None), str)]
    if missing:
        return f"provider {kind} does not set {', '.join(missing)} (a str)"
    if not provider.name:
        return f"provider {kind} has an empty name"
    if provider.stream_framing not in STREAM_FRAMINGS:
        return (f"provider {kind} has stream_framing {provider.stream_framing!r}; "
                f"use one of {', '.join(STREAM_FRAMINGS)}")
    return None


def collect_providers(
    pm: pluggy.PluginManager, notices: Notices | None = None
) -> dict[str, Provider]:
    """Every installed provider by name, sorted. Two plugins with one name are an error;
    a plugin that raises or gives an incomplete provider is reported and skipped."""
    found: dict[str, Provider] = {}
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
) -> Provider:
    """The provider called ``name``, or a usage error listing the installed ones."""
    providers = collect_providers(pm, notices)
    try:
        return providers[name]
    except KeyError:
        installed = ", ".join(providers) or "none"
        raise UsageError(
            f"Unknown provider '{name}'. Installed providers: {installed}. {INSTALL_HINT}"
        ) from None


def provider_environ(provider: Provider, given: Mapping[str, Any],
                     environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with ``provider``'s settings from config.json (``given``: the
    ``providers`` setting) under their variables (:attr:`Provider.settings_env`); a
    variable already set wins. A key the provider does not take, or a value that is
    neither text nor true/false, is a :class:`ConfigError` naming it."""
    from ikigai_core.errors import ConfigError

    mine = given.get(provider.name) or {}
    where = f"config.json: providers.{provider.name}"
    if not isinstance(mine, Mapping):
        raise ConfigError(f"{where} must be a JSON object; fix or remove it")
    added: dict[str, str] = {}
    for key, value in mine.items():
        variable = provider.settings_env.get(key)
        if variable is None:
            known = ", ".join(provider.settings_env) or "none"
            raise ConfigError(f"{where}: unknown key '{key}' (known: {known}); fix or remove it")
        if not isinstance(value, (str, bool)):
            raise ConfigError(f"{where}.{key} must be text or true/false, got {value!r}")
        added[variable] = str(value).lower() if isinstance(value, bool) else value
    return {**added, **environ}
