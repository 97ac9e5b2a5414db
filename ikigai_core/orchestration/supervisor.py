"""The sub-agent runtime (issue 25): a tree of sessions under one root session.

Each child is an :class:`~ikigai_core.session.Session` run in this process on its own
thread (a new Python process per child could not reach the first provider request in
150 ms; 16 children on 2 cores wait on the network, not the CPU). Its tool calls are
real subprocesses as always. The :class:`Supervisor` keeps the tree (a depth limit), runs
at most ``max_running`` children at once (the others queue, in fork order), enforces each
child's :class:`~ikigai_core.orchestration.limits.Budget` (an agent's token budget covers
its descendants too), rolls every child's tokens up into its ancestors and the root
session's totals, routes a child's approval question to the root's asker labelled with
the child's name and id, and stops children, their tools and their descendants on
``kill``, a budget, or the root's cancel.

Chat commands, the API server and library callers all call this class; every method takes
``caller`` (default: the root), the agent on whose behalf it acts: an agent may touch only
its own descendants.
"""

from __future__ import annotations

import builtins
import itertools
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ikigai_core.agent import Cancelled
from ikigai_core.budget import SHARED, Budget, BudgetExceeded
from ikigai_core.conversation import AssistantMessage, Conversation, Usage, UserMessage
from ikigai_core.errors import IkigaiError, UsageError
from ikigai_core.notices import Notices
from ikigai_core.orchestration.ledger import Ledger, sweep
from ikigai_core.orchestration.limits import child_defaults, filled, parse_budget
from ikigai_core.orchestration.node import (
    BUDGET_EXCEEDED_STATUS,
    DONE,
    ENDED,
    FAILED,
    INTERRUPTED,
    KILLED,
    QUEUED,
    RUNNING,
    AgentInfo,
    AgentNode,
    AgentResult,
    usage_dict,
)
from ikigai_core.prompt import with_section, without_section
from ikigai_core.questions import taken_back_when
from ikigai_core.session import store_of

if TYPE_CHECKING:
    from ikigai_core.conversation import Compaction, Message, ToolCall
    from ikigai_core.session import Asker, Session

WAIT_OUTPUT_CAP = 16 * 1024
"""Bytes of one agent's output ``wait`` returns by default (head and tail kept)."""
JOIN_TIMEOUT = 10.0
"""Seconds ``kill`` and ``close`` wait for a stopped agent's thread (its tools are killed
within a fraction of that)."""
KEEP_ENDED = 100
"""Ended agents (killed, over budget, interrupted) whose records the tree keeps; past that,
the oldest is forgotten with its descendants once all of them ended: ``list`` and the API no
longer know it, sessions.db still has it (``ikigai sessions show``), and its tokens stay in
its ancestors' totals. A run that forks thousands keeps a bounded tree."""
FORK_TOOL = "agent_fork"
RECORDED = {QUEUED: "running", RUNNING: "running", FAILED: "done"}
"""The session log's word for a state it has none for (schema 4 knows running, done,
interrupted, killed, budget_exceeded)."""


class Definition(Protocol):
    """What a fork naming an agent definition starts with
    (:class:`ikigai_core.agent_definitions.AgentDefinition` is one)."""

    @property
    def name(self) -> str:
        """The definition's name (``list`` shows it)."""

    @property
    def prompt(self) -> str:
        """Its system prompt."""

    @property
    def tools(self) -> tuple[str, ...] | None:
        """The tool names it may send (``None``: the parent's toolset)."""

    @property
    def model(self) -> str | None:
        """Its model (``None``: the parent's)."""

    @property
    def max_turns(self) -> int | None:
        """Model requests one prompt may make (``None``: the settings')."""

    @property
    def budget(self) -> Budget:
        """Its budget; a fork's own ``budget`` wins limit by limit."""


@dataclass(frozen=True)
class AgentEvent:
    """What the front end hears about a child.

    :param kind: ``queued``, ``started``, ``ended``, ``approval`` (it asks the user) or
        ``usage`` (its latest model turns were counted: the totals grew).
    :param id: the child's id. :param name: its definition's name, or ``agent``.
    :param status: its status now. :param error: why it ended, if it failed or was stopped.
    """

    kind: str
    id: str
    name: str
    status: str
    error: str | None = None


def no_definitions(name: str) -> Definition:
    """The definitions lookup without definitions: every name is unknown."""
    raise UsageError(f"unknown agent '{name}'; no agent definitions are available")


class LabelledNotices(Notices):
    """A child's notices: each goes to ``target`` too, starting with the child's label,
    so a denial without a terminal names the child."""

    def __init__(self, target: Notices, label: str) -> None:
        super().__init__()
        self.target = target
        self.label = label

    def report(self, message: str, *, plugin: str | None = None, kind: str = "warning") -> None:
        """Keep the notice, and report it labelled to the root's notices."""
        super().report(message, plugin=plugin, kind=kind)
        self.target.report(f"{self.label}: {message}", plugin=plugin, kind=kind)


class Supervisor:
    """The children of one root session, and the rules they run under.

    :param session: the root session (depth 0).
    :param max_running: children running at once; further forks queue.
    :param max_depth: the deepest agent allowed (root = 0; 2 allows grandchildren).
    :param default_budget: what a child's unset limits default to (the settings').
    :param definitions: looks up an agent definition by name (a :class:`Definition`); an
        unknown one raises an :class:`IkigaiError` saying so.
    :param index: the system prompt's section naming the definitions, which every agent
        that can fork is told and no other (``None``: there are none).
    :param on_event: told of each :class:`AgentEvent`, from any thread.
    """

    def __init__(self, session: Session, *, max_running: int = 4, max_depth: int = 2,
                 default_budget: Budget | None = None,
                 definitions: Callable[[str], Definition] = no_definitions,
                 index: str | None = None,
                 on_event: Callable[[AgentEvent], None] | None = None) -> None:
        self.root = AgentNode("root", "root", secrets.token_urlsafe(24), session,
                              budget=session.meter.budget, status=RUNNING)
        self.max_running = max_running
        self.max_depth = max_depth
        self.default_budget = default_budget or Budget()
        self.definitions = definitions
        self.index = index
        self.on_event = on_event or (lambda event: None)
        self.environ: dict[str, str] = {}
        """What every agent's tool processes get besides its token (the API's address)."""
        self._nodes: dict[str, AgentNode] = {"root": self.root}
        self._tokens: dict[str, AgentNode] = {self.root.token: self.root}
        self._lock = threading.Condition()
        self._queue: deque[AgentNode] = deque()
        self._running = 0
        self._ids = itertools.count(1)
        self._ask_lock = threading.Lock()
        self._prompt_of: dict[AgentNode, int] = {}
        self._ended: deque[AgentNode] = deque()
        self._closed = False
        self._ledger = Ledger(session.app.home)
        session.on_cancel.append(self.cancel_turn)

    @classmethod
    def for_session(cls, session: Session, *,
                    on_event: Callable[[AgentEvent], None] | None = None) -> Supervisor:
        """A supervisor for ``session`` under its app's settings (``agents_max_running``,
        ``agents_max_depth``, the ``agents_budget_*`` defaults) and agent definitions."""
        app = session.app
        settings = app.settings
        agents = getattr(app, "agents", None)
        if session.recorder.enabled:  # an ikigai killed while its children ran
            sweep(app.home, store_of(app))

        def lookup(name: str) -> Definition:
            found = None if agents is None else agents.get(name)
            if found is None:
                if agents is None:
                    return no_definitions(name)
                raise UsageError(agents.why_not(name))
            return found  # type: ignore[no-any-return]

        return cls(session, max_running=settings.agents_max_running,
                   max_depth=settings.agents_max_depth, default_budget=child_defaults(settings),
                   definitions=lookup, index=None if agents is None else agents.index(),
                   on_event=on_event)

    # -- the API ----------------------------------------------------------------------

    def fork(self, prompt: str, *, agent: str | None = None,
             tools: Sequence[str] | None = None, model: str | None = None,
             history: str | int = "none", budget: Budget | Mapping[str, Any] | None = None,
             caller: str = "root") -> str:
        """Start a child of ``caller`` on ``prompt``; its id. It runs at once, or queues
        while ``max_running`` children run.

        :param agent: an agent definition's name (its system prompt, tools, model, budget).
        :param tools: the tool names it may send (default: the definition's, else the
            parent's toolset); at the depth limit ``agent_fork`` is never sent.
        :param model: its model (default: the definition's, else the parent's).
        :param history: ``none`` (a fresh conversation), ``all`` (the parent's answered
            exchanges) or N (the last N of those messages).
        :param budget: ``{tokens, turns, seconds, cost}`` (or a :class:`Budget`); unset
            limits come from the definition, then the defaults. Its tokens and cost cap
            its descendants' too, as the root session's budget caps every child's.
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise UsageError("fork needs a non-empty prompt")
        parent = self._node(caller)
        if parent.depth + 1 > self.max_depth:
            raise UsageError(f"agent '{parent.id}' is at depth {parent.depth}, the deepest "
                             f"allowed (agents_max_depth is {self.max_depth}); do the work "
                             "yourself")
        if self._closed or parent.stop is not None or parent.status in ENDED:
            raise UsageError(f"agent '{parent.id}' is {parent.stop or parent.status}; "
                             "it cannot fork")
        spec = self.definitions(agent) if agent is not None else None
        limits = filled(filled(parse_budget(budget), spec.budget if spec else Budget()),
                        self.default_budget)
        node_id = f"agent-{next(self._ids)}"
        session = self._child_session(parent, spec, tools, model, history, node_id, limits)
        node = AgentNode(node_id, spec.name if spec else "agent", secrets.token_urlsafe(24),
                         session, parent=parent, budget=limits,
                         fork_turn=parent.live.recorder.parent, transcript=session.id)
        self._equip(node)
        self._record_fork(node)
        with self._lock:
            parent.children.append(node)
            self._nodes[node.id] = node
            self._tokens[node.token] = node
            if parent is self.root:
                self._prompt_of[node] = self.root.live.prompts
            node.inbox.append(prompt)
            self._queue.append(node)
            self._dispatch()
        if node.status == QUEUED:
            self._emit("queued", node)
        return node.id

    def send(self, agent_id: str, message: str, *, interrupt: bool = False,
             caller: str = "root") -> None:
        """Give ``message`` to a child: its next prompt once the current one is answered,
        or with ``interrupt`` at once (the prompt in progress is cancelled, its tools
        killed, and its exchange dropped). A child that is done starts again."""
        if not isinstance(message, str) or not message.strip():
            raise UsageError("send needs a non-empty message")
        node = self._scoped(caller, agent_id)
        with self._lock:
            if node.stop is not None or node.status in ENDED:
                raise UsageError(f"agent '{agent_id}' is {node.stop or node.status}; it "
                                 "takes no more messages")
            node.inbox.append(message)
            if node.thread is not None:
                if interrupt:
                    node.interrupting = True
                    node.live.cancel()
            elif node not in self._queue:
                node.status = QUEUED
                self._queue.append(node)
                self._dispatch()

    def wait(self, ids: Sequence[str] = (), timeout: float | None = None, *,
             mode: str = "all", max_output: int = WAIT_OUTPUT_CAP,
             caller: str = "root") -> list[AgentResult]:
        """Wait until all (``mode="all"``) or any (``"any"``) of ``ids`` (default: every
        child of ``caller``) is no longer queued or running, or ``timeout`` seconds pass;
        then each one's :class:`AgentResult` (one still running says so). While a child
        waits, its running slot is free for the agents it waits for."""
        if mode not in ("all", "any"):
            raise UsageError(f"wait mode must be 'all' or 'any', got {mode!r}")
        if timeout is not None and not timeout >= 0:
            raise UsageError(f"wait timeout must be a number of seconds >= 0, got {timeout!r}")
        me = self._node(caller)
        nodes = [self._scoped(caller, i) for i in ids] if ids else list(me.children)
        settled = all if mode == "all" else any
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock, self._slot_freed(me):
            while nodes and not settled(self._settled(n) for n in nodes):
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._lock.wait(left)
            return [self._result(n, max_output) for n in nodes]

    def kill(self, agent_id: str, *, cascade: bool = True, caller: str = "root") -> AgentInfo:
        """Stop a child now: its prompt is cancelled, its tools killed, and with
        ``cascade`` its descendants too; returns once they have stopped (or after
        :data:`JOIN_TIMEOUT`)."""
        node = self._scoped(caller, agent_id)
        stopped = self._stop(node, KILLED, f"killed by {caller}", cascade=cascade)
        self._join(stopped)
        return node.info()

    def list(self, *, caller: str = "root") -> list[AgentInfo]:
        """Every descendant of ``caller``, parents before their children."""
        with self._lock:
            return [node.info() for node in self._node(caller).descendants()]

    def usage(self, *, caller: str = "root") -> dict[str, Any]:
        """Tokens of ``caller`` and its descendants: ``{"id", "total", "children"}``, each
        usage ``{"input_tokens", "output_tokens", "total"}`` (the root's ``total`` includes
        its own turns)."""
        with self._lock:
            me = self._node(caller)
            total = me.live.usage if me is self.root else me.usage
            return {"id": me.id, "total": usage_dict(total),
                    "children": usage_dict(sum((c.usage for c in me.children), me.forgotten))}

    def agent_for(self, token: str) -> str | None:
        """The id of the agent holding API ``token``; ``None`` for no agent's."""
        node = self._tokens.get(token)
        return None if node is None else node.id

    def token_of(self, agent_id: str) -> str:
        """The API token of agent ``agent_id`` (the root's is ``root``)."""
        return self._node(agent_id).token

    def cancel_turn(self) -> None:
        """Stop the children the root forked during its current prompt (the root's
        cancel and Ctrl-C call this)."""
        current = self.root.live.prompts
        with self._lock:  # a child ending meanwhile leaves _prompt_of
            turn = [node for node, prompt in self._prompt_of.items() if prompt == current]
        for node in turn:
            self._stop(node, KILLED, "cancelled with its parent's turn")

    def close(self) -> None:
        """Stop every child still queued or running (status ``interrupted``) and wait for
        them: nothing is left."""
        with self._lock:
            self._closed = True
        stopped = [agent for node in tuple(self._nodes.values())
                   if node is not self.root and (node.thread or node.status == QUEUED)
                   for agent in self._stop(node, INTERRUPTED, "its ikigai ended",
                                           cascade=False)]
        self._join(stopped)
        if all(node.thread is None for node in self._nodes.values()):
            self._ledger.close()  # every end is recorded
        if self.cancel_turn in self.root.live.on_cancel:
            self.root.live.on_cancel.remove(self.cancel_turn)

    # -- building a child -------------------------------------------------------------

    def _child_session(self, parent: AgentNode, spec: Definition | None,
                       tools: Sequence[str] | None, model: str | None,
                       history: str | int, node_id: str, budget: Budget) -> Session:
        from ikigai_core.session import Session
        from ikigai_core.toolset import Toolset

        mine = parent.live
        names = tools if tools is not None else (spec.tools if spec else None)
        registry = mine.tools()  # discovered once, shared by the whole tree
        messages = inherited(mine, history)
        loaded = carried_skills(mine, messages, system=spec is None)
        if names is not None:
            if not all(isinstance(n, str) for n in names):
                raise UsageError("fork tools must be a list of tool names")
            limit = frozenset(names) & {tool.name for tool in mine.toolset.tools(registry)}
            toolset = Toolset(limit, skills=mine.toolset.skills, loaded=loaded,
                              origin="fork tools", within=limit)
        else:
            toolset = Toolset(mine.toolset.selected, mine.toolset.excluded,
                              skills=mine.toolset.skills, loaded=loaded)
        if parent.depth + 2 > self.max_depth and FORK_TOOL in registry:  # it could not fork
            toolset.excluded |= {FORK_TOOL}
            if toolset.selected is not None:
                toolset.selected -= {FORK_TOOL}
        forks = FORK_TOOL in {tool.name for tool in toolset.tools(registry)}
        system = (with_section if forks else without_section)(
            spec.prompt if spec else mine.conversation.system, self.index)
        conversation = Conversation(system=system, messages=messages)
        child = Session(mine.app, mine.provider, model or (spec.model if spec else None)
                        or mine.model, conversation=conversation, toolset=toolset,
                        events=ChildEvents(self, node_id), stream=mine.agent.stream,
                        max_turns=spec.max_turns if spec else None, command="agent",
                        log=mine.recorder.enabled, budget=budget)
        child.granted_by = mine  # the run's grants, as they are at each call: never wider
        child.agent.turn_limit = (  # --max-turns is the root's alone
            f"max_turns in the agent definition '{spec.name}'" if spec and spec.max_turns
            else "the max_turns setting (IKIGAI_MAX_TURNS), or fork an agent definition "
                 "with max_turns")
        child.use_tools(registry)
        return child

    def _equip(self, node: AgentNode) -> None:
        """The child's tools get its token, its notices and questions its label."""
        label = f"agent {node.name} ({node.id})"
        session = node.live
        session.tool_context(
            environ={**self.environ, "IKIGAI_API_TOKEN": node.token} if self.environ else {},
            notices=LabelledNotices(session.app.notices, label))
        session.ask = self._asker(node, label)

    def _asker(self, node: AgentNode, label: str) -> Asker | None:
        """The root's asker, the question labelled with the child, one question at a time,
        taken back if the child is stopped meanwhile; ``None`` when the root has none (then
        the rules decide, anything else is denied)."""
        root_ask = self.root.live.ask
        if root_ask is None:
            return None

        def ask(question: str) -> str | None:
            with self._ask_lock, taken_back_when(node.live.calls.cancelled):
                if node.stop is not None:
                    return None
                self._emit("approval", node)
                return root_ask(f"[{label}] {question}")

        return ask

    # -- running ----------------------------------------------------------------------

    def _dispatch(self) -> None:
        """Start queued children while fewer than ``max_running`` run (under the lock)."""
        while self._queue and self._running < self.max_running:
            node = self._queue.popleft()
            if node.stop is not None:
                continue
            self._running += 1
            node.status = RUNNING
            node.thread = threading.Thread(target=self._run, args=(node,),
                                           name=f"ikigai-{node.id}", daemon=True)
            node.thread.start()

    def _run(self, node: AgentNode) -> None:
        """The child's thread: answer its messages one by one, then give its slot back."""
        self._emit("started", node)
        while True:
            with self._lock:
                if node.stop is not None or not node.inbox:
                    self._end_run(node)
                    break
                message = node.inbox.popleft()
                node.interrupting = False
            self._prompt(node, message)
        self._emit("ended", node)

    def _prompt(self, node: AgentNode, message: str) -> None:
        session = node.live
        node.counted = len(session.conversation.messages)
        try:
            reply = session.send(message)
        except Cancelled:
            if node.stop is None and node.interrupting:
                return  # the next message goes on
            node.error = node.error or "cancelled"
        except BudgetExceeded as exc:  # what was answered is kept
            self._stop(node, BUDGET_EXCEEDED_STATUS, str(exc))
            self.count(node)
            node.output = last_answer(session.conversation.messages)
        except IkigaiError as exc:
            node.error = str(exc)
        except Exception as exc:  # a provider plugin's bug must not kill the thread silently
            node.error = f"{type(exc).__name__}: {exc}"
        else:
            self.count(node)
            node.output, node.error = reply.text, None

    def _end_run(self, node: AgentNode) -> None:
        """Under the lock: the child's final status for this run, its slot freed."""
        self._running -= 1
        node.thread = None
        node.status = node.stop or (FAILED if node.error else DONE)
        self._retire(node)
        self._dispatch()
        self._lock.notify_all()

    # -- what a child's session tells us ----------------------------------------------

    def before_request(self, node_id: str) -> None:
        """Called in the child's thread before each model request: stop if it was
        stopped or interrupted (a cancel can come before its session started listening),
        and count its tokens (its session's meter keeps its own budget)."""
        node = self._nodes[node_id]
        if node.stop is not None or node.interrupting:
            raise Cancelled("the agent was stopped")
        self.count(node)

    def count(self, node: AgentNode | str) -> None:
        """Add the model turns the child got since the last count to its and its
        ancestors' totals (and the root session's); stop an ancestor over its budget."""
        if isinstance(node, str):
            node = self._nodes[node]
        messages = node.live.conversation.messages
        new = sum((m.usage for m in messages[node.counted:]
                   if isinstance(m, AssistantMessage) and m.usage is not None), Usage())
        node.counted = len(messages)
        if not new.total:
            return
        before, node.counted_cost = node.counted_cost, node.live.meter.spent.cost
        cost = None if before is None or node.counted_cost is None else node.counted_cost - before
        over: list[tuple[AgentNode, str]] = []  # an ancestor over a limit, and why
        with self._lock:
            node.usage += new
            for agent in node.ancestors():
                agent.usage += new
                if agent.session is None:
                    continue
                agent.session.add_sub_agent_spend(new, cost)
                limit = agent.session.meter.reached(SHARED)
                if limit is not None:
                    over.append((agent, f"{agent.session.meter.exceeded(limit)} "
                                        "(with its sub-agents)"))
        self._emit("usage", node)
        for agent, why in over:
            for stopped in [agent] if agent is not self.root else agent.children:
                self._stop(stopped, BUDGET_EXCEEDED_STATUS, why)

    # -- stopping ---------------------------------------------------------------------

    def _stop(self, node: AgentNode, status: str, why: str, *,
              cascade: bool = True) -> Sequence[AgentNode]:
        """Mark ``node`` (and with ``cascade`` its descendants) stopped with ``status``,
        cancel what runs (its tools are killed); the agents stopped."""
        stopped: builtins.list[AgentNode] = []
        with self._lock:
            for agent in [node, *(node.descendants() if cascade else ())]:
                if agent.stop is not None or agent.status in ENDED:
                    continue
                agent.stop = status
                agent.error = why if agent is node else f"{why} (with {node.id})"
                agent.inbox.clear()
                agent.live.cancel()
                stopped.append(agent)
                if agent.thread is None:
                    if agent in self._queue:
                        self._queue.remove(agent)
                    agent.status = status
                    self._retire(agent)
                    self._lock.notify_all()
        for agent in stopped:
            if agent.thread is None:
                self._emit("ended", agent)
        return stopped

    def _join(self, nodes: Sequence[AgentNode]) -> None:
        deadline = time.monotonic() + JOIN_TIMEOUT
        for node in nodes:
            thread = node.thread
            if thread is not None and thread is not threading.current_thread():
                thread.join(max(deadline - time.monotonic(), 0.0))

    # -- helpers ----------------------------------------------------------------------

    def _node(self, agent_id: str) -> AgentNode:
        node = self._nodes.get(agent_id)
        if node is None:
            raise UsageError(f"no agent '{agent_id}'; `list` shows the agents")
        return node

    def _scoped(self, caller: str, agent_id: str) -> AgentNode:
        """Agent ``agent_id``, if it is a descendant of ``caller``; an error names both
        otherwise (the same for an agent that does not exist: ids leak nothing)."""
        me = self._node(caller)
        node = self._nodes.get(agent_id) if isinstance(agent_id, str) else None
        if node is None or not node.is_below(me):
            raise UsageError(f"no agent '{agent_id}' below '{caller}'; `list` shows yours")
        return node

    def _retire(self, node: AgentNode) -> None:
        """Under the lock: an agent ended for good keeps its record, not its session (a
        long run forks thousands), and its token opens nothing any more."""
        if node.status in ENDED and node.session is not None:
            node.session = None
            self._tokens.pop(node.token, None)
            self._prompt_of.pop(node, None)
            self._ended.append(node)
            self._forget_ended()

    def _forget_ended(self) -> None:
        """Under the lock: keep the records of the last :data:`KEEP_ENDED` ended agents
        (an older one whose descendants have not all ended stays with them)."""
        while len(self._ended) > KEEP_ENDED:
            node = self._ended.popleft()
            subtree = [node, *node.descendants()]
            if node.id not in self._nodes or any(a.status not in ENDED for a in subtree):
                continue
            for agent in subtree:
                del self._nodes[agent.id]
            assert node.parent is not None
            node.parent.children.remove(node)
            node.parent.forgotten += node.usage

    def _settled(self, node: AgentNode) -> bool:
        return node.thread is None and node.status not in (QUEUED, RUNNING)

    @contextmanager
    def _slot_freed(self, me: AgentNode) -> Iterator[None]:
        """Under the lock: a running child that waits gives its slot to others meanwhile
        (else children waiting for queued grandchildren would hold every slot)."""
        if me is self.root or me.thread is None:
            yield
            return
        self._running -= 1
        self._dispatch()
        try:
            yield
        finally:
            while self._running >= self.max_running and not self._closed:
                self._lock.wait()
            self._running += 1

    def _result(self, node: AgentNode, max_output: int) -> AgentResult:
        output, truncated = truncate(node.output, max_output)
        status = node.status if node.thread is None else RUNNING
        return AgentResult(node.id, status, output, node.usage, truncated, node.transcript,
                           node.error)

    def _emit(self, kind: str, node: AgentNode) -> None:
        if kind in ("started", "ended"):
            self._record_status(node)
        self.on_event(AgentEvent(kind, node.id, node.name, node.status, node.error))

    # -- recording --------------------------------------------------------------------

    def _record_fork(self, node: AgentNode) -> None:
        """Record the child as a session of its own: its parent's, the parent's turn it
        was forked after, its agent, ``running``. A log that cannot be written is
        reported, and the child goes on unrecorded."""
        session, parent = node.live, node.parent
        if node.transcript is None or parent is None:
            return
        try:
            store_of(session.app).new_session(
                node.transcript, command="agent", cwd=session.app.cwd,
                system=session.conversation.system, parent=parent.live.id,
                fork_turn=node.fork_turn, agent=node.name, status="running")
            self._ledger.started(node.transcript)
        except (IkigaiError, OSError) as exc:
            session.app.notices.report(f"agent {node.id} is not recorded: {exc}")
            session.recorder.enabled = False
            node.transcript = None

    def _record_status(self, node: AgentNode) -> None:
        """Record a recorded child's state as it starts and ends."""
        if node.transcript is None:
            return
        status = RECORDED.get(node.status, node.status)
        try:
            store_of(self.root.live.app).set_status(node.transcript, status)
            if status == "running":
                self._ledger.started(node.transcript)
            else:
                self._ledger.ended(node.transcript)
        except (IkigaiError, OSError) as exc:
            self.root.live.app.notices.report(
                f"the state of agent {node.id} is not recorded: {exc}")



class ChildEvents:
    """A child session's events: the supervisor counts its tokens and enforces its budget
    (an exception here stops the child's prompt; its tools are killed)."""

    def __init__(self, supervisor: Supervisor, node_id: str) -> None:
        self.supervisor = supervisor
        self.node_id = node_id

    def request(self) -> None:
        """Before each model request: the budget, the stop."""
        self.supervisor.before_request(self.node_id)

    def text(self, piece: str) -> None:
        """Nothing: only a child's answer reaches its parent."""

    def tool_start(self, call: ToolCall) -> None:
        """Count the turn that made the call."""
        self.supervisor.count(self.node_id)

    def tool_end(self, call: ToolCall, envelope: Mapping[str, Any]) -> None:
        """Nothing."""

    def turn(self) -> Any:
        """Nothing around a turn."""
        from contextlib import nullcontext

        return nullcontext()

    def compacted(self, compaction: Compaction) -> None:
        """Nothing: the child's compactions are in its own session's record."""


def inherited(session: Session, history: str | int) -> list[Message]:
    """The parent's messages a child starts with: ``none``, ``all`` of its answered
    exchanges (a turn still waiting for tool results is left out), or the last N of
    them, starting at a user message."""
    if history == "none":
        return []
    all_ = history == "all"
    if not all_ and not (isinstance(history, int) and not isinstance(history, bool)
                         and history >= 0):
        raise UsageError(f"history must be 'none', 'all' or a number of messages >= 0, "
                         f"got {history!r}")
    messages = list(session.conversation.messages)
    answered = max((i + 1 for i, m in enumerate(messages)
                    if isinstance(m, AssistantMessage) and not m.tool_calls), default=0)
    kept = messages[:answered] if all_ else messages[max(answered - int(history), 0):answered]
    while kept and not isinstance(kept[0], UserMessage):
        kept.pop(0)
    return kept


def carried_skills(session: Session, messages: Sequence[Message], *, system: bool) -> list[str]:
    """The skills loaded in ``session`` whose instructions a child starting with
    ``messages`` carries (and, with ``system``, with the session's system prompt: a skill
    loaded but named by none of its messages is in that prompt), so their tools come
    with them."""
    from ikigai_core.context import skills_in

    named, anywhere = skills_in(messages), skills_in(session.conversation.messages)
    return [name for name in list(session.toolset.loaded)
            if name in named or (system and name not in anywhere)]


def last_answer(messages: Sequence[Message]) -> str:
    """The text of the last model turn among ``messages`` (``""``: none)."""
    return next((m.text for m in reversed(messages) if isinstance(m, AssistantMessage)), "")


def truncate(text: str, cap: int) -> tuple[str, dict[str, int] | None]:
    """``text`` within ``cap`` UTF-8 bytes: head and tail kept around a marker, and the
    protocol's ``truncated`` record; ``(text, None)`` when it fits."""
    data = text.encode()
    if len(data) <= cap:
        return text, None
    marker = f"\n[... {len(data) - cap} bytes cut ...]\n".encode()
    half = max((cap - len(marker)) // 2, 0)
    kept = data[:half] + marker + data[len(data) - half:] if half else data[:cap]
    return kept.decode(errors="ignore"), {"total_bytes": len(data), "kept_bytes": len(kept)}


__all__ = ["FORK_TOOL", "JOIN_TIMEOUT", "WAIT_OUTPUT_CAP", "AgentEvent", "ChildEvents",
           "Definition", "LabelledNotices", "Supervisor", "carried_skills", "inherited",
           "last_answer", "truncate"]
