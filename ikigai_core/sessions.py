"""The session log: every ``ask`` and ``chat`` conversation, in a session store.

One record per conversation (``sessions``: where and how it started, its system prompt,
and for a sub-agent's the conversation and turn it was forked from, its agent definition
and state), one per prompt and everything it led to (``turns``: the messages, provider,
model, token usage and cost, the SHA-256 of each advertised tool's schema, the skills
loaded, the turn it went on from), one per tool call (``tool_calls``: arguments, envelope,
duration). A turn is written in one transaction, so a crash or Ctrl-C never leaves half of
one. Two processes going on with one conversation at once each record the turn they went
on from (its ``parent``): the conversation branches, and going on follows the branch of
the latest turn (issue 21). Records are read back as if a stranger had edited them
(:mod:`ikigai_core.session_json`).

Where they are kept is a :class:`SessionStore`, chosen by the ``sessions_url`` setting's
scheme among the kinds plugins give (the ``ikigai_session_stores`` hook,
:class:`StoreKind`): SQLite (``sqlite:///PATH``, the default ``$IKIGAI_HOME/sessions.db``,
:mod:`ikigai_core.sqlite_store`) and, with ikigai-store-postgres, PostgreSQL
(docs/sessions.md).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ikigai_core.conversation import Compaction, Conversation, Message
from ikigai_core.errors import UsageError
from ikigai_core.session_json import STATUSES, DamagedSession, entry_of, is_status, read_session

if TYPE_CHECKING:
    import pluggy

    from ikigai_core.notices import Notices
    from ikigai_core.tools import Tool

DB_NAME = "sessions.db"
"""The default store's file in ``$IKIGAI_HOME``."""
SCHEMA_VERSION = 4
"""The version of the records' schema every store keeps (each with its migrations)."""

SESSION_FIELDS = ("id", "created", "updated", "cwd", "command", "system", "parent",
                  "fork_turn", "agent", "status")
TURN_FIELDS = ("seq", "created", "provider", "model", "prompt", "input_tokens",
               "output_tokens", "messages", "tools", "parent", "skills", "cache_read_tokens",
               "cache_write_tokens", "cost")
CALL_FIELDS = ("turn", "seq", "call_id", "name", "arguments", "envelope", "duration")
"""The fields of each record, as every store keeps them (JSON ones as JSON text) and
``sessions export`` writes them."""


def schema_hash(tool: Tool) -> str:
    """SHA-256 of the tool's schema as JSON with sorted keys: what the model was offered."""
    schema = tool.schema or {"name": tool.name, "description": tool.description,
                             "parameters": tool.parameters}
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- Records --------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    """One prompt and everything it led to, as it is recorded.

    :param prompt: what the user sent.
    :param provider: the provider's name.
    :param model: the model asked.
    :param messages: the messages the prompt added to the conversation (its own first),
        and the compactions made meanwhile.
    :param tools: the tools advertised, by name.
    :param skills: the skills loaded when it ended, in load order.
    :param cache_read_tokens: input tokens the provider read from its prompt cache.
    :param cache_write_tokens: input tokens the provider wrote to its prompt cache.
    :param cost: what the turn cost in US dollars (``None``: unknown).
    """

    prompt: str
    provider: str
    model: str
    messages: Sequence[Message | Compaction]
    tools: Mapping[str, Tool]
    skills: Sequence[str] = ()
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class Branch:
    """A recorded conversation as it goes on: the turns from its first to its latest.

    :param conversation: their messages, and the system prompt last sent.
    :param last: the latest turn's number, the parent of the next (``None``: no turn).
    :param skills: the skills loaded when the latest turn ended.
    """

    conversation: Conversation
    last: int | None
    skills: tuple[str, ...]


@dataclass(frozen=True)
class SessionSummary:
    """One conversation as ``ikigai sessions list`` shows it; times and texts are ``None``
    where a damaged row holds something else, a token count of the wrong type 0.

    :param cost: the turns' cost in US dollars; ``None`` when any turn's is unknown.
    :param parent: the conversation this one is a sub-agent of, forked from its turn
        ``fork_turn``.
    :param agent: the name of the agent definition a sub-agent runs.
    :param status: a sub-agent's state, one of :data:`STATUSES` (``None``: not a
        sub-agent's).
    """

    id: str
    created: float | None
    updated: float | None
    cwd: str | None
    command: str | None
    model: str | None
    first_prompt: str | None
    turns: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None = None
    parent: str | None = None
    fork_turn: int | None = None
    agent: str | None = None
    status: str | None = None


@dataclass(frozen=True)
class Match:
    """One recorded prompt whose text or tool calls match a search.

    :param session: the conversation's id.
    :param turn: the prompt's number in it, from 0.
    :param created: when it was recorded (``None`` where a damaged row holds something else).
    :param snippet: the matching text around the match, each matched word between
        :data:`MARK` s.
    """

    session: str
    turn: int | None
    created: float | None
    snippet: str


MARK = "**"
"""What a search's snippet puts either side of each matched word."""
SNIPPET_WORDS = 16
"""Words a search's snippet shows around the match."""


@dataclass(frozen=True)
class Rows:
    """One conversation's records as a store keeps them: the session's, its turns' (by
    number) and its tool calls' (by turn and number), each a mapping of the ``*_FIELDS``
    (JSON fields as text)."""

    session: Mapping[str, Any]
    turns: Sequence[Mapping[str, Any]]
    calls: Sequence[Mapping[str, Any]]


def search_words(text: str) -> list[str]:
    """The words of a search, all of them needed; none is a :class:`UsageError`."""
    words = text.split()
    if not words:
        raise UsageError("sessions search needs some text to look for")
    return words


def new_session_id() -> str:
    """A fresh conversation id: 12 hex digits."""
    return secrets.token_hex(6)


def check_status(status: str | None) -> None:
    """Refuse a sub-agent's state that is none of :data:`STATUSES`."""
    if not is_status(status):
        raise ValueError(f"a session's status is one of {STATUSES} or None, not {status!r}")


def redact(url: str) -> str:
    """``url`` with its password (if any) as ``***``: what every message shows of it."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<a session store URL that is not one>"
    if not password:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:***@{host}").geturl()


# -- The store ------------------------------------------------------------------


class SessionStore(ABC):
    """Where the session log is kept: a plugin's store implements the abstract methods
    (docs/plugins.md, "Session stores"); reading a conversation back and going on with it
    are built on them.

    Every method raises :class:`~ikigai_core.errors.IkigaiError` in one line when the store
    cannot be used, naming it by :attr:`name` (never with a password).
    """

    name: str
    """The store as messages show it: its URL with the password redacted."""

    @abstractmethod
    def new_session(self, session_id: str, *, command: str, cwd: Path, system: str | None,
                    parent: str | None = None, fork_turn: int | None = None,
                    agent: str | None = None, status: str | None = None) -> None:
        """Record conversation ``session_id`` before its first turn: a sub-agent's of
        conversation ``parent`` (forked from its turn ``fork_turn``), running the agent
        definition ``agent``, in state ``status`` (one of :data:`STATUSES`)."""

    @abstractmethod
    def set_status(self, session_id: str, status: str | None) -> None:
        """Set a sub-agent's state (one of :data:`STATUSES`)."""

    @abstractmethod
    def add_turn(self, session_id: str, turn: Turn, *, command: str, cwd: Path,
                 system: str | None, parent: int | None = None) -> int:
        """Record ``turn`` in conversation ``session_id`` (created on its first turn unless
        :meth:`new_session` did), in one transaction, as going on from turn ``parent``;
        ``system`` is the system prompt it was sent with. Returns the turn's number (the
        conversation's turns so far)."""

    @abstractmethod
    def sessions(self) -> list[SessionSummary]:
        """Every conversation, the most recently used first (a damaged record too)."""

    @abstractmethod
    def ids(self, prefix: str = "") -> list[str]:
        """The ids of the conversations whose id starts with ``prefix``, the oldest first."""

    @abstractmethod
    def last_in(self, cwd: Path) -> str | None:
        """The conversation most recently used in ``cwd``, if any."""

    @abstractmethod
    def rows(self, session_id: str) -> Rows | None:
        """Everything recorded of one conversation as it is kept (``None``: no such one)."""

    @abstractmethod
    def put(self, rows: Rows) -> bool:
        """Record a whole conversation read elsewhere (``sessions import``), in one
        transaction; ``False``, and nothing written, when its id is taken."""

    @abstractmethod
    def search(self, text: str, *, limit: int) -> list[Match]:
        """The recorded prompts whose messages or tool calls hold every word of ``text``
        (:func:`search_words`), the best match first, at most ``limit``."""

    @abstractmethod
    def remove(self, session_id: str) -> None:
        """Delete one conversation and everything recorded of it."""

    def resolve(self, prefix: str) -> str:
        """The id of the one conversation whose id starts with ``prefix``."""
        ids = self.ids(prefix) if prefix else []
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise UsageError(f"no session '{prefix}'; `ikigai sessions list` shows them")
        raise UsageError(f"'{prefix}' starts {len(ids)} session ids; give more of it")

    def show(self, session_id: str) -> dict[str, Any]:
        """Everything recorded of one conversation, as JSON-ready data; a damaged record
        is a :class:`~ikigai_core.session_json.DamagedSession`."""
        rows = self.rows(session_id)
        if rows is None:
            raise UsageError(f"no session '{session_id}'; `ikigai sessions list` shows them")
        return read_session(session_id, rows.session, rows.turns, rows.calls)

    def branch(self, session_id: str, provider: str) -> Branch:
        """The conversation to go on with, for ``provider``: the latest turn and the turns
        it went on from (another provider's own message forms are left out; the
        provider-neutral ones are kept)."""
        data = self.show(session_id)
        turns = {turn["seq"]: turn for turn in data["turns"]}
        chain: list[dict[str, Any]] = []
        seq = max(turns, default=None)
        while seq is not None:  # read_session saw that each parent is an earlier turn
            chain.append(turns[seq])
            seq = turns[seq]["parent"]
        conversation = Conversation(system=data["system"])
        for turn in reversed(chain):
            for message in turn["messages"]:
                try:
                    entry = entry_of(message, keep_raw=turn["provider"] == provider,
                                     at=len(conversation.messages))
                except ValueError as exc:  # a compaction covering messages it came before
                    raise DamagedSession(session_id, str(exc)) from None
                if isinstance(entry, Compaction):
                    conversation.compactions.append(entry)
                else:
                    conversation.add(entry)
        return Branch(conversation, chain[0]["seq"] if chain else None,
                      tuple(chain[0]["skills"]) if chain else ())


@dataclass(frozen=True)
class StoreKind:
    """A kind of session store a plugin gives (the ``ikigai_session_stores`` hook).

    :param schemes: the ``sessions_url`` schemes it opens (``sqlite``, ``postgresql``).
    :param open: builds the store for a URL, given ``$IKIGAI_HOME``; cheap (it connects
        on first use), raising :class:`~ikigai_core.errors.UsageError` for a URL it
        cannot use (naming it redacted).
    """

    schemes: tuple[str, ...]
    open: Callable[[str, Path], SessionStore]


def scheme_of(url: str) -> str:
    """The scheme of a ``sessions_url`` (``sqlite``, ``postgresql``), or a one-line
    :class:`UsageError` for one that has none."""
    scheme = url.partition(":")[0].lower() if ":" in url else ""
    if not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
        raise UsageError(f"sessions_url '{redact(url)}' names no store; use sqlite:///PATH "
                         "or postgresql://USER@HOST/DATABASE")
    return scheme


def open_store(pm: pluggy.PluginManager, url: str, home: Path, notices: Notices) -> SessionStore:
    """The store ``url`` names, opened by the plugin giving its scheme (the
    ``ikigai_session_stores`` hook); a scheme none gives is a one-line :class:`UsageError`."""
    from ikigai_core.hookcall import collect

    scheme = scheme_of(url)
    kinds: dict[str, StoreKind] = {}
    for plugin, kind in collect(pm, "ikigai_session_stores", notices, _kind_problem):
        for given in kind.schemes:
            if given in kinds:
                notices.report(f"session store '{given}' of plugin '{plugin}' is already "
                               "given by another plugin; skipped", plugin=plugin)
            kinds.setdefault(given, kind)
    if scheme not in kinds:
        hint = (" (pip install ikigai-store-postgres)" if scheme.startswith("postgres")
                else "")
        raise UsageError(f"sessions_url '{redact(url)}': no installed plugin keeps sessions "
                         f"in '{scheme}'{hint}; stores: {', '.join(sorted(kinds))}")
    return kinds[scheme].open(url, home)


def _kind_problem(item: Any) -> str | None:
    if not isinstance(item, StoreKind):
        return f"it returned a {type(item).__name__}, not a StoreKind"
    return None
