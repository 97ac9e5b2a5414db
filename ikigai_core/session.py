"""The session service: one conversation with a model, built without the command line.

A :class:`Session` owns what one conversation needs: the provider and model, the toolset
and its enforcement (its :class:`~ikigai_core.toolcalls.ToolCalls`: only the tools a
request advertised can run in reply to it), the system prompt and the skills loaded, the
recording to ``sessions.db``, the approvals (its grants and an injected asker), the token
totals and cancellation. ``ikigai ask`` and ``ikigai chat`` are front ends of it; a Python
program builds one with :meth:`Session.open`. ``ikigai mcp serve`` runs its client's calls
through a session without a model (:meth:`Session.serving`).

It prints nothing: what happens goes to its :class:`SessionEvents`, what it could not
do to the app's :class:`~ikigai_core.notices.Notices`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_core.agent import Agent
from ikigai_core.budget import Budget, Meter
from ikigai_core.compaction import Keeper
from ikigai_core.conversation import Compaction, Conversation, Message, Usage, usage_of
from ikigai_core.errors import IkigaiError, KeyRejected, UsageError
from ikigai_core.grants import NO_GRANTS, Grants
from ikigai_core.keys import KeyStore, stored_key_rejected, with_stored_key
from ikigai_core.prompt import skill_message, system_prompt, with_section, with_skill
from ikigai_core.providers import (
    INSTALL_HINT,
    collect_providers,
    get_provider,
    provider_environ,
)
from ikigai_core.toolcalls import ToolCalls
from ikigai_core.toolset import Toolset
from ikigai_core.transport import api_key

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.attachments import Attachment
    from ikigai_core.context import Breakdown
    from ikigai_core.conversation import AssistantMessage, ToolCall
    from ikigai_core.execution import CallResult
    from ikigai_core.notices import Notices
    from ikigai_core.providers import Provider, ProviderRequest
    from ikigai_core.sessions import SessionStore
    from ikigai_core.skills import Skill
    from ikigai_core.tools import Tool

Entry = Message | Compaction
"""What a recorded prompt holds: its messages, and the compactions made meanwhile."""
Asker = Callable[[str], "str | None"]
"""Asks the user one question and returns the line they answered, ``None`` for no answer."""


class SessionEvents(Protocol):
    """What a front end is told while a session works (every method may do nothing).

    One may also have ``thinking(piece)``: the model's thinking as it arrives (a whole
    turn's without streaming), as :class:`NoEvents` has; without it, it is not shown.
    """

    def request(self) -> None:
        """A request to the model starts."""

    def text(self, piece: str) -> None:
        """A piece of the model's text arrived (a whole turn's without streaming)."""

    def tool_start(self, call: ToolCall) -> None:
        """A tool call is about to run."""

    def tool_end(self, call: ToolCall, envelope: Mapping[str, Any]) -> None:
        """A tool call ended with ``envelope``."""

    def turn(self) -> AbstractContextManager[None]:
        """Around one prompt's whole exchange (the model's turns and the tools)."""

    def compacted(self, compaction: Compaction) -> None:
        """The conversation was compacted (:mod:`ikigai_core.compaction`); optional: an
        object without this method is not told."""


class NoEvents:
    """Tells nobody anything: the events of a session built without a front end."""

    def request(self) -> None:
        """Nothing."""

    def text(self, piece: str) -> None:
        """Nothing."""

    def thinking(self, piece: str) -> None:
        """Nothing."""

    def tool_start(self, call: ToolCall) -> None:
        """Nothing."""

    def tool_end(self, call: ToolCall, envelope: Mapping[str, Any]) -> None:
        """Nothing."""

    def turn(self) -> AbstractContextManager[None]:
        """Nothing around a turn."""
        return nullcontext()

    def compacted(self, compaction: Compaction) -> None:
        """Nothing."""


def choose_provider(app: App, name: str | None) -> Provider:
    """``name`` > ``IKIGAI_PROVIDER``/config > the first installed one with its key set >
    the first with a key stored by ``ikigai keys`` > the first with its base URL set (a
    local server needs no key)."""
    name = name or app.settings.provider
    if name:
        return get_provider(app.pm, name, app.notices)
    providers = collect_providers(app.pm, app.notices)
    stored = KeyStore(app.home).stored()
    signs: tuple[Callable[[Provider], bool], ...] = (
        lambda p: any(app.environ.get(var) for var in p.api_key_env),
        lambda p: p.name in stored, lambda p: bool(app.environ.get(p.base_url_env)))
    for ready in signs:
        for provider in providers.values():
            if ready(provider):
                return provider
    if not providers:
        raise UsageError(f"No provider installed. {INSTALL_HINT}")
    variables = " or ".join(var for p in providers.values() if p.key_required
                            for var in p.api_key_env[:1])
    raise UsageError(
        f"No API key found: set {variables}, or store one with `ikigai keys set PROVIDER` "
        f"(installed: {', '.join(providers)}); for a local server, pass --provider NAME "
        "or set IKIGAI_PROVIDER"
    )


def choose_model(app: App, provider: Provider, name: str | None) -> str:
    """``name`` > ``IKIGAI_MODEL``/config > the provider's default model."""
    return name or app.settings.model or provider.default_model


def ready_provider(app: App, name: str | None) -> Provider:
    """The provider to talk to, once everything a run needs holds: a wrongly configured
    setting, a tool guard that cannot work or a missing API key fails here, before any
    discovery and before the model is asked."""
    app.settings.verify()
    check_tool_guards(app)
    chosen = choose_provider(app, name)
    origin = with_stored_key(chosen, app.environ, app.home)
    if origin is not None:
        app.stored_keys[chosen.name] = origin
    api_key(chosen, app.environ)
    provider_environ(chosen, app.settings.providers, app.environ)
    return chosen


def check_tool_guards(app: App) -> None:
    """Fail now, before the model is asked, on what would refuse every tool call later: a
    ``tool_env`` the environment policy cannot read, a sandbox bubblewrap cannot build.
    Each is checked by its own plugin's code, unless that plugin is disabled."""
    from ikigai_core.defaults import sandbox, tool_env

    if not app.pm.is_blocked(tool_env.__name__):
        tool_env.filter_env({}, app.settings.tool_env, ())
    if not app.pm.is_blocked(sandbox.__name__) and app.settings.sandbox != "off":
        sandbox.usable_bwrap()


def start_conversation(app: App, *, system: str | None = None, skills: Sequence[str] = (),
                       tools: str | None = None, no_tools: bool = False
                       ) -> tuple[Conversation, Toolset]:
    """A new conversation's system prompt (``system`` instead of the configured one) and
    toolset (``tools`` names, or none with ``no_tools``), the ``skills`` loaded; an
    unknown skill is a :class:`UsageError`."""
    if system is not None:
        app.settings = app.settings.replace(system_prompt=system)
    toolset = Toolset.chosen(app.settings, app.skills, tools=tools, no_tools=no_tools)
    conversation = Conversation(system=system_prompt(app))
    for name in skills:
        conversation.system = with_skill(conversation.system, toolset.load(name))
    return conversation, toolset


def store_of(app: App) -> SessionStore:
    """The invocation's session log: the store the ``sessions_url`` setting names
    (default ``$IKIGAI_HOME/sessions.db``), opened by the plugin giving its scheme."""
    from ikigai_core.sessions import open_store

    return open_store(app.pm, app.settings.sessions_url or "sqlite://", app.home, app.notices)


@dataclass(frozen=True)
class NextRequest:
    """What :meth:`Session.next_request` builds: the HTTP request (no key in it), and
    whether :meth:`Session.send` would compact the conversation before sending it (the
    window would be filling up: the request sent then holds the model's summary instead)."""

    request: ProviderRequest
    compacts: bool


class Recorder:
    """Writes each answered prompt of one conversation to the session log.

    :param app: the invocation (its home holds the log).
    :param command: what the conversation is recorded as started by (``ask``, ``chat``).
    :param enabled: ``False`` with ``--no-log`` or ``log: false``: nothing is written.
    """

    def __init__(self, app: App, command: str, *, enabled: bool) -> None:
        from ikigai_core.sessions import new_session_id

        self.app = app
        self.command = command
        self.enabled = enabled
        self.session_id = new_session_id()
        self.parent: int | None = None
        """The recorded turn the next one goes on from (``None``: the conversation's first)."""

    @property
    def session(self) -> str | None:
        """The id this conversation is recorded under, or ``None`` when nothing is recorded."""
        return self.session_id if self.enabled else None

    def resume(self, provider: str, toolset: Toolset, *, session: str | None,
               last: bool) -> Conversation | None:
        """The conversation ``session`` (an id or its start), or with ``last`` the last one
        in this directory, to go on with (recorded under its id, from its latest turn);
        ``None`` when neither. The skills it had loaded are loaded into ``toolset`` again
        (their text is in it already: its system prompt, a ``load_skill`` result, or a
        skill message), the ones loaded in ``toolset`` before are unloaded."""
        if session is None and not last:
            return None
        store = store_of(self.app)
        found = store.resolve(session) if session is not None else store.last_in(self.app.cwd)
        if found is None:
            raise UsageError("no earlier conversation in this directory; "
                             "`ikigai sessions list` shows them all")
        branch = store.branch(found, provider)
        self.session_id, self.parent = found, branch.last
        toolset.unload()
        for name in branch.skills:
            if name in toolset.skills:
                toolset.load(name)
            else:
                self.app.notices.report(f"skill '{name}' of session {self.session_id} is not "
                                        "available now; its tools are not sent")
        return branch.conversation

    def record(self, agent: Agent, conversation: Conversation, entries: Sequence[Entry],
               prompt: str, cost: float | None = None) -> None:
        """Record the prompt that added ``entries`` to ``conversation`` (its messages and
        compactions), which cost ``cost`` US dollars (``None``: unknown); a log that cannot
        be written is reported once, and the conversation goes on unrecorded."""
        if not self.enabled:
            return
        from ikigai_core.sessions import Turn

        advertised = {tool.name: tool for tool in agent.toolset.tools(agent.registry)}
        usage = usage_of(entries)
        turn = Turn(prompt, agent.provider.name, agent.model, entries, advertised,
                    tuple(agent.toolset.loaded), cache_read_tokens=usage.cache_read_tokens,
                    cache_write_tokens=usage.cache_write_tokens, cost=cost)
        try:
            self.parent = store_of(self.app).add_turn(
                self.session_id, turn, command=self.command, cwd=self.app.cwd,
                system=conversation.system, parent=self.parent)
        except IkigaiError as exc:
            self.app.notices.report(f"{exc}; this conversation is not recorded")
            self.enabled = False

    def restart(self) -> None:
        """Record what follows as a new conversation (``/clear``)."""
        from ikigai_core.sessions import new_session_id

        self.session_id, self.parent = new_session_id(), None


class Session:
    """One conversation with one model: send prompts, the model calls tools, the answers
    come back; each answered prompt is recorded unless logging is off.

    Build it with :meth:`open` (or :meth:`serving`). Not thread-safe, except :meth:`cancel`
    and :meth:`call`.

    :param app: the invocation: settings, plugins, tools, notices.
    :param provider: the provider plugin speaking to the model; ``None``: no model (the
        session only runs the calls it is given, :meth:`call`).
    :param model: the model name (default: the provider's).
    :param conversation: where the conversation starts (its system prompt, and messages).
    :param toolset: the tools the conversation may send, and the skills loaded.
    :param ask: asks the user whether a tool call may run; ``None``: nobody can answer,
        so a call that would ask is denied (fail closed).
    :param events: told as the model and the tools work (default: nobody).
    :param stream: stream the model's text.
    :param max_turns: model requests one prompt may make (default: the settings').
    :param command: what the conversation is recorded as started by.
    :param log: record it in ``sessions.db`` (default: the ``log`` setting).
    :param budget: the most the session may spend (default: the ``max_cost`` setting's
        cap); once reached, :meth:`send` raises :class:`~ikigai_core.budget.BudgetExceeded`.
    :param grants: what it approves of the calls that would ask (``--yes``, ``--allow``):
        :attr:`grants` (default: nothing).
    """

    def __init__(self, app: App, provider: Provider | None, model: str | None = None, *,
                 conversation: Conversation | None = None, toolset: Toolset | None = None,
                 ask: Asker | None = None, events: SessionEvents | None = None,
                 stream: bool = True, max_turns: int | None = None,
                 command: str = "python", log: bool | None = None,
                 budget: Budget | None = None, grants: Grants = NO_GRANTS) -> None:
        self.app = app
        self.events = events or NoEvents()
        self.toolset = toolset or Toolset(skills=app.skills)
        """The tools the conversation sends, and the skills loaded."""
        self._grants = grants
        self.granted_by: Session | None = None
        """The session whose :attr:`grants` approve this one's calls (a sub-agent's parent,
        as the supervisor forks it); ``None``: its own."""
        self.calls = ToolCalls(app, self.toolset, on_start=self.events.tool_start,
                               on_end=self.events.tool_end, grants=lambda: self.grants)
        """The tool boundary: every tool call of this session starts there."""
        self.keeper = Keeper(app, on_compact=getattr(  # events written before compaction
            self.events, "compacted", lambda compaction: None))  # existed have no such method
        """Keeps the conversation within the model's window (compaction, pruning)."""
        self._agent = None if provider is None else Agent(
            app, provider, model or provider.default_model, toolset=self.toolset,
            stream=stream, max_turns=max_turns or app.settings.max_turns,
            on_request=self.events.request, on_text=self.events.text, calls=self.calls,
            reasoning=app.settings.reasoning,
            on_thinking=getattr(self.events, "thinking", NoEvents().thinking),
            context=self.keeper,
        )
        self.conversation = conversation or Conversation(system=system_prompt(app))
        self.recorder = Recorder(app, command, enabled=app.settings.log if log is None else log)
        self.fresh_system = self.conversation.system
        self.fresh_skills = tuple(self.toolset.loaded)
        self.registry: Mapping[str, Tool] | None = None
        """The tools found (``None``: not yet; :meth:`send` discovers them then)."""
        self.exchange: tuple[Message, ...] = ()
        """The messages the last answered prompt added (its model turns and tool results)."""
        self.turn_usage = Usage()
        """Tokens the last answered prompt used (every model turn it took, and those of the
        sub-agents while it ran)."""
        self.usage = Usage()
        """Tokens this session used, its sub-agents' included (:meth:`add_usage`)."""
        self.prompts = 0
        """How many prompts :meth:`send` was given."""
        self.on_cancel: list[Callable[[], None]] = []
        """Called by :meth:`cancel` (the sub-agent supervisor stops the turn's children)."""
        self._usage_lock = threading.Lock()
        self._tool_extras: tuple[Mapping[str, str], Notices | None] = ({}, None)
        self.turn_cost: float | None = 0.0
        """US dollars the last answered prompt cost, its sub-agents' while it ran included
        (``None``: a price was not known)."""
        self.ask = ask
        from ikigai_core.prices import warm

        warm()
        self.meter = Meter(budget or Budget(cost=app.settings.max_cost), self._price)
        """What the session spent, against its budget."""
        if self._agent is not None:
            self._agent.meter = self.meter

    @property
    def cost(self) -> float | None:
        """US dollars this session's own model turns cost so far (``None`` once a price was
        not known)."""
        return self.meter.spent.cost

    @property
    def total_cost(self) -> float | None:
        """US dollars this session and its sub-agents cost so far (``None`` once a price
        was not known)."""
        return self.meter.total.cost

    def _price(self, usage: Usage) -> float | None:
        from ikigai_core.prices import cost_of

        return cost_of(self.provider.name, self.model, usage)

    @classmethod
    def open(cls, app: App, provider: str | None = None, model: str | None = None, *,
             system: str | None = None, skills: Sequence[str] = (), tools: str | None = None,
             no_tools: bool = False, ask: Asker | None = None,
             events: SessionEvents | None = None, stream: bool = True,
             max_turns: int | None = None, log: bool | None = None,
             command: str = "python", budget: Budget | None = None,
             grants: Grants = NO_GRANTS) -> Session:
        """A new conversation in ``app``, checked before anything is sent: the settings, the
        tool guards and the provider's API key (an :class:`IkigaiError` names what is
        wrong). ``provider`` and ``model`` default as ``ikigai ask``'s do; ``system``
        replaces the system prompt; ``skills`` are loaded; ``tools`` (``"a,b"``) or
        ``no_tools`` choose the tools; the rest are as for the class."""
        chosen = ready_provider(app, provider)
        conversation, toolset = start_conversation(app, system=system, skills=skills,
                                                   tools=tools, no_tools=no_tools)
        return cls(app, chosen, choose_model(app, chosen, model), conversation=conversation,
                   toolset=toolset, ask=ask, events=events, stream=stream,
                   max_turns=max_turns, log=log, command=command, budget=budget,
                   grants=grants)

    @classmethod
    def serving(cls, app: App, registry: Mapping[str, Tool], *, tools: str | None = None,
                ask: Asker | None = None) -> Session:
        """A session without a model, for the calls a client makes (``ikigai mcp serve``):
        it offers the toolset's choice (``tools``, ``"a,b"``, else the config's) of
        ``registry``, and records nothing (the client keeps its conversation). A name the
        config chooses that ``registry`` lacks selects nothing, as it is not served."""
        session = cls(app, None, toolset=Toolset.chosen(app.settings, app.skills, tools=tools),
                      conversation=Conversation(), ask=ask, log=False, command="mcp serve")
        session.registry = registry
        return session

    @property
    def ask(self) -> Asker | None:
        """Who is asked whether a tool call may run (``None``: nobody; such calls are denied)."""
        return self._ask

    @ask.setter
    def ask(self, ask: Asker | None) -> None:
        self._ask = ask
        environ, notices = self._tool_extras
        self.calls.executor = self.app.executor_asking(ask, environ=environ, notices=notices)

    @property
    def grants(self) -> Grants:
        """What this session approves of the tool calls that would ask, read as each call
        is judged: its own (``--yes``, ``--allow``; set it for chat's ``/approve``), or a
        sub-agent's parent's as they are then (:attr:`granted_by`), so what the user approves
        for the run reaches the children already running, and a child's are never wider."""
        return self._grants if self.granted_by is None else self.granted_by.grants

    @grants.setter
    def grants(self, grants: Grants) -> None:
        if self.granted_by is not None:
            raise UsageError("a sub-agent is approved by its parent's grants; change the "
                             "root session's")
        self._grants = grants

    def tool_context(self, *, environ: Mapping[str, str], notices: Notices | None) -> None:
        """Give this session's tool processes ``environ`` on top of the app's (the agents
        API's address and this agent's token), and report what its tool calls could not
        do to ``notices`` (a sub-agent's, labelled with its name; ``None``: the app's)."""
        self._tool_extras = (dict(environ), notices)
        self.ask = self._ask

    def add_usage(self, usage: Usage) -> None:
        """Count ``usage`` in :attr:`usage`, from any thread."""
        with self._usage_lock:
            self.usage += usage

    def add_sub_agent_spend(self, usage: Usage, cost: float | None) -> None:
        """Count a sub-agent's model turns (``cost``: their US dollars, ``None`` unknown) in
        this session's totals and against its budget, whose tokens and cost limits hold
        its sub-agents too; from any thread."""
        self.add_usage(usage)
        self.meter.charge(usage.total, cost)

    @property
    def agent(self) -> Agent:
        """The agent loop talking to the model; a session without one raises
        :class:`UsageError`."""
        if self._agent is None:
            raise UsageError("this session has no model: it only runs the tool calls it is "
                             "given (Session.call)")
        return self._agent

    @property
    def provider(self) -> Provider:
        """The provider plugin."""
        return self.agent.provider

    @property
    def model(self) -> str:
        """The model each request names; set it to switch models."""
        return self.agent.model

    @model.setter
    def model(self, name: str) -> None:
        self.agent.model = name

    @property
    def id(self) -> str | None:
        """The id the conversation is recorded under; ``None`` when it is not recorded."""
        return self.recorder.session

    def use_tools(self, registry: Mapping[str, Tool]) -> None:
        """Send from ``registry`` from now on; a chosen tool it lacks is a :class:`UsageError`."""
        self.toolset.verify(registry)
        self.registry = registry

    def tools(self) -> Mapping[str, Tool]:
        """The tools found, discovering them the first time."""
        if self.registry is None:
            self.use_tools(self.app.registry())
        assert self.registry is not None
        return self.registry

    def offered(self) -> dict[str, Tool]:
        """The tools a call may use now, by name: the toolset's choice of the tools found,
        and of those the ones the provider can take."""
        provider = None if self._agent is None else self._agent.provider
        return self.calls.offered(self.toolset.tools(self.tools()), provider)

    def call(self, name: str, arguments: Any) -> CallResult:
        """Run one call of tool ``name`` that a client makes (not the model), through the
        session's boundary: a tool not :meth:`offered` is ``TOOL_NOT_FOUND`` and nothing
        starts. It carries no call id: the client's user chose it, as with ``ikigai tool
        run``, so approval rules do not judge it; the environment policy, the sandbox and
        every other plugin do. Not recorded. Thread-safe."""
        return self.calls.call(self.offered(), name, arguments)

    def send(self, prompt: str, images: Sequence[Attachment] = ()) -> AssistantMessage:
        """Send ``prompt`` (with ``images``: see :mod:`ikigai_core.inputs`), run the tools
        the model calls, and return its last turn.

        Images the provider or model cannot read are a :class:`UsageError` before anything
        is sent. On any exception (a provider error, the turn limit, :meth:`cancel`,
        Ctrl-C) the conversation stays as it was before ``prompt``, and nothing is recorded;
        except when the budget is reached (:class:`~ikigai_core.budget.BudgetExceeded`):
        what was answered is kept and recorded, then it is raised.
        """
        from ikigai_core.budget import BudgetExceeded

        if images:
            from ikigai_core.inputs import check_images

            check_images(self.provider, self.model, images)
        self.agent.registry = self.tools()
        self.agent.rearm()
        self.prompts += 1
        mark, cost = len(self.conversation.messages), self.cost
        before = self.usage, self.total_cost
        made = len(self.conversation.compactions)
        try:
            with self.events.turn(), self._deadline():
                reply = self.agent.run(self.conversation, prompt, images)
        except KeyRejected as exc:
            origin = self.app.stored_keys.get(self.provider.name)
            if origin is None:
                raise
            raise KeyRejected(stored_key_rejected(self.provider.name, origin, exc.status),
                              status=exc.status) from None
        except BudgetExceeded:
            if len(self.conversation.messages) > mark:
                self._answered(mark, made, prompt, cost)
                self._with_sub_agents(*before)
            raise
        except KeyboardInterrupt:  # Ctrl-C stops what the prompt started, as cancel does
            for hook in list(self.on_cancel):
                hook()
            raise
        finally:  # the agent discovers again when a plugin's tools change
            self.registry = self.agent.registry
        self._answered(mark, made, prompt, cost)
        self._with_sub_agents(*before)
        return reply

    def _with_sub_agents(self, usage: Usage, cost: float | None) -> None:
        """The last prompt's figures with what its sub-agents spent while it ran (the
        session had used ``usage`` and, with them, cost ``cost`` before it); the record
        keeps the session's own, as each sub-agent's session keeps its own."""
        with self._usage_lock:
            self.turn_usage = self.usage - usage
        total = self.total_cost
        self.turn_cost = None if cost is None or total is None else total - cost

    def _answered(self, mark: int, made: int, prompt: str, cost: float | None) -> None:
        """Count and record the messages ``prompt`` added from ``mark`` on, and the
        compactions from the ``made``-th on (the session had cost ``cost`` before)."""
        self.exchange = tuple(self.conversation.messages[mark:])
        self._recorded(self.conversation.entries(mark, made), prompt, cost)

    def _recorded(self, entries: Sequence[Entry], prompt: str, cost: float | None) -> None:
        """Count and record what ``prompt`` added (the session had cost ``cost`` before)."""
        self.turn_usage = usage_of(entries)
        self.add_usage(self.turn_usage)
        self.turn_cost = None if cost is None or self.cost is None else self.cost - cost
        self.recorder.record(self.agent, self.conversation, entries, prompt, self.turn_cost)

    def next_request(self, prompt: str) -> NextRequest:
        """The request :meth:`send` would make first for ``prompt``, built as it builds it
        (the view of the conversation: the compaction in force, old tool results pruned,
        the skills loaded; the tools; the prompt-cache marks), with no key in it. Nothing
        is sent, compacted or recorded, and the conversation stays as it was."""
        from ikigai_core.conversation import UserMessage
        from ikigai_core.transport import wire_request

        agent = self.agent
        agent.registry = self.tools()
        tools = self.toolset.tools(agent.registry)
        mark = len(self.conversation.messages)
        self.conversation.add(UserMessage(prompt))
        try:
            return NextRequest(wire_request(
                self.provider, self.keeper.view(agent, self.conversation), tools,
                model=self.model, stream=agent.stream, reasoning=agent.reasoning, api_key=None,
                environ=provider_environ(self.provider, self.app.settings.providers,
                                         self.app.environ)),
                compacts=self.keeper.compacts(agent, self.conversation, tools))
        finally:
            self.conversation.truncate(mark)

    def compact(self, instructions: str = "") -> Compaction | None:
        """Summarise the older part of the conversation now (``/compact``), with
        ``instructions`` for the summary; ``None`` when there is nothing to summarise.
        Recorded as a prompt of its own; the messages stay in the session log."""
        cost = self.cost
        made = self.keeper.compact(self.agent, self.conversation, reason="command",
                                   instructions=instructions or None,
                                   tools=self.toolset.tools(self.tools()))
        if made is not None:
            self._recorded([made], f"/compact {instructions}".rstrip(), cost)
        return made

    def uncompact(self) -> Compaction | None:
        """Send the whole conversation again (``/uncompact``); ``None`` when it was not
        compacted. Recorded as a prompt of its own."""
        made = self.keeper.uncompact(self.conversation)
        if made is not None:
            self._recorded([made], "/uncompact", self.cost)
        return made

    def context(self) -> Breakdown:
        """Where the next request's tokens would go (``/context``)."""
        from ikigai_core.context import breakdown

        tools = self.toolset.tools(self.tools())
        skills = [self.toolset.skills[name] for name in self.toolset.loaded
                  if name in self.toolset.skills]
        return breakdown(self.keeper.view(self.agent, self.conversation), self.provider,
                         tools, skills, self.keeper.gauge, self.keeper.window(self.agent))

    def _deadline(self) -> AbstractContextManager[None]:
        """Around one prompt: its seconds counted; at the seconds limit the run stops as
        :meth:`cancel` stops it (running tools killed)."""
        from ikigai_core.budget import metered

        return metered(self.meter, lambda: self.agent.stop(self.meter.exceeded("seconds")))

    def warm(self) -> threading.Thread:
        """Make ready, on a thread of its own (returned, started), what the first request
        needs: httpx and the provider's client (``ikigai chat`` does as it starts, so its
        first message or sub-agent does not wait for them), and genai-prices; then
        :func:`~ikigai_core.heap.settle` what is loaded."""
        from ikigai_core import heap, prices
        from ikigai_core.transport import warm

        environ = provider_environ(self.provider, self.app.settings.providers, self.app.environ)

        def settle() -> None:
            warm(self.provider, environ)
            prices.warmed()
            heap.settle()

        thread = threading.Thread(target=settle, name="ikigai-warm", daemon=True)
        thread.start()
        return thread

    def cancel(self) -> None:
        """Stop the prompt in progress, from any thread: its request to the model ends at
        once (its connection closed), its tools are killed, and :meth:`send` raises
        :class:`~ikigai_core.cancel.Cancelled`."""
        self.calls.cancelled.set()
        for hook in list(self.on_cancel):
            hook()

    def load_skill(self, name: str) -> Skill:
        """Load skill ``name``: its tools join the toolset, its instructions the system
        prompt before the first prompt, else a message after the conversation so far
        (:func:`~ikigai_core.prompt.skill_message`: the prefix the provider cached stays
        as it was), recorded as a prompt ``/load NAME`` of its own. An unknown skill is
        a :class:`UsageError`."""
        skill = self.toolset.load(name)
        if not self.conversation.messages:
            self.conversation.system = with_skill(self.conversation.system, skill)
            return skill
        message = skill_message(skill)
        self.conversation.add(message)
        self.agent.registry = self.tools()  # the record names the tools it would send
        self.recorder.record(self.agent, self.conversation, [message], f"/load {name}", 0.0)
        return skill

    def resume(self, session_id: str | None = None, *, last: bool = False) -> bool:
        """Go on with the recorded conversation ``session_id`` (an id or its start), or with
        ``last`` the last one in this directory, its skills loaded again; ``False`` when
        neither is asked for. Recording goes on under its id. The skills loaded here
        before that it had not are loaded into it (:meth:`load_skill`)."""
        given = list(self.toolset.loaded)
        earlier = self.recorder.resume(self.provider.name, self.toolset, session=session_id,
                                       last=last)
        if earlier is None:
            return False
        self.conversation = earlier
        for name in given:
            if name not in self.toolset.loaded:
                self.load_skill(name)
        return True

    def tell(self, section: str | None) -> None:
        """Add ``section`` (a paragraph, :func:`~ikigai_core.prompt.with_section`) to the
        system prompt of this conversation if it has not begun, and of each one
        :meth:`clear` starts; one begun keeps its system prompt, which the provider cached."""
        self.fresh_system = with_section(self.fresh_system, section)
        if not self.conversation.messages:
            self.conversation.system = with_section(self.conversation.system, section)

    def clear(self) -> None:
        """Start a new conversation as this one started: the skills loaded since are gone,
        their text and their tools; it is recorded under a new id."""
        self.toolset.unload(keep=self.fresh_skills)
        self.conversation = Conversation(system=self.fresh_system)
        self.recorder.restart()
