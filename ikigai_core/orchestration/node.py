"""One agent of the tree the :class:`~ikigai_core.orchestration.Supervisor` keeps, and what
the API answers about it."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ikigai_core.budget import Budget
from ikigai_core.conversation import Usage

if TYPE_CHECKING:
    from ikigai_core.session import Session

QUEUED, RUNNING, DONE = "queued", "running", "done"
FAILED, KILLED, BUDGET_EXCEEDED_STATUS, INTERRUPTED = (
    "failed", "killed", "budget_exceeded", "interrupted")
STATUSES = (QUEUED, RUNNING, DONE, FAILED, KILLED, BUDGET_EXCEEDED_STATUS, INTERRUPTED)
"""An agent's states: ``queued`` (over the running cap), ``running``, ``done`` (answered;
``send`` starts it again), ``failed`` (a provider error, the turn limit), ``killed``,
``budget_exceeded``, ``interrupted`` (its ikigai ended while it ran)."""
ENDED = (KILLED, BUDGET_EXCEEDED_STATUS, INTERRUPTED)
"""States no message starts again."""


@dataclass(frozen=True)
class AgentResult:
    """What ``wait`` returns for one agent.

    :param id: the agent's id.
    :param status: one of :data:`STATUSES`.
    :param output: its last answer (``""`` before the first), cut to the cap of ``wait``.
    :param usage: tokens it and its descendants used.
    :param truncated: ``None``, or ``{"total_bytes": N, "kept_bytes": M}`` when ``output``
        was cut (head and tail kept, the protocol's rule).
    :param transcript: the session id its conversation is recorded under in sessions.db
        (``ikigai sessions show ID``); ``None`` when nothing is recorded.
    :param error: why it stopped (``BUDGET_EXCEEDED: ...``, a provider error), or ``None``.
    """

    id: str
    status: str
    output: str
    usage: Usage
    truncated: dict[str, int] | None
    transcript: str | None
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON for the API."""
        return {"id": self.id, "status": self.status, "output": self.output,
                "usage": usage_dict(self.usage), "truncated": self.truncated,
                "transcript": self.transcript, "error": self.error}


@dataclass(frozen=True)
class AgentInfo:
    """One agent as ``list`` shows it.

    :param id: its id. :param name: its definition's name, or ``agent``.
    :param parent: its parent's id (the root's is ``root``). :param depth: root = 0.
    :param status: one of :data:`STATUSES`. :param usage: tokens of it and its descendants.
    :param transcript: its session id (``None``: not recorded).
    """

    id: str
    name: str
    parent: str | None
    depth: int
    status: str
    usage: Usage
    transcript: str | None

    def as_dict(self) -> dict[str, Any]:
        """JSON for the API."""
        return {"id": self.id, "name": self.name, "parent": self.parent, "depth": self.depth,
                "status": self.status, "usage": usage_dict(self.usage),
                "transcript": self.transcript}


def usage_dict(usage: Usage) -> dict[str, int]:
    """``{"input_tokens", "output_tokens", "total"}``."""
    return {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "total": usage.total}


@dataclass(eq=False)
class AgentNode:
    """An agent in the tree; its mutable fields change under the supervisor's lock."""

    id: str
    name: str
    token: str
    session: Session | None
    """Its conversation; ``None`` once it ended for good (kept light: a long run forks
    thousands)."""
    parent: AgentNode | None = None
    budget: Budget = field(default_factory=Budget)
    status: str = QUEUED
    output: str = ""
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    """Tokens of this agent and all its descendants."""
    children: list[AgentNode] = field(default_factory=list)
    forgotten: Usage = field(default_factory=Usage)
    """Tokens of its ended children the tree no longer keeps (the supervisor's
    ``KEEP_ENDED``); :attr:`usage` still counts them."""
    inbox: deque[str] = field(default_factory=deque)
    thread: threading.Thread | None = None
    stop: str | None = None
    """Why it is being stopped (:data:`KILLED`, :data:`BUDGET_EXCEEDED_STATUS`), once it is."""
    interrupting: bool = False
    fork_turn: int | None = None
    """The parent's recorded turn it was forked after."""
    transcript: str | None = None
    """The session id its conversation is recorded under (``None``: not recorded)."""
    counted: int = 0
    """Messages of its conversation whose tokens are counted."""
    counted_cost: float | None = 0.0
    """US dollars of its own turns counted so far (its meter's; ``None``: a price unknown)."""

    @property
    def live(self) -> Session:
        """Its session (only while it has not ended for good)."""
        assert self.session is not None, f"agent {self.id} has ended"
        return self.session

    @property
    def depth(self) -> int:
        """Root = 0."""
        return 0 if self.parent is None else self.parent.depth + 1

    def ancestors(self) -> list[AgentNode]:
        """Parent first, the root last."""
        found, node = [], self.parent
        while node is not None:
            found.append(node)
            node = node.parent
        return found

    def descendants(self) -> list[AgentNode]:
        """Every agent below this one, parents before their children."""
        found: list[AgentNode] = []
        for child in self.children:
            found += [child, *child.descendants()]
        return found

    def is_below(self, other: AgentNode) -> bool:
        """Whether ``other`` is this agent's ancestor."""
        return other in self.ancestors()

    def info(self) -> AgentInfo:
        """How ``list`` shows it."""
        return AgentInfo(self.id, self.name, None if self.parent is None else self.parent.id,
                         self.depth, self.status, self.usage, self.transcript)
