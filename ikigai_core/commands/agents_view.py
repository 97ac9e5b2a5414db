"""What a chat shows of its sub-agents (issue 25): their ends, said between turns or at
once at the prompt, and the status line's word. Kept apart from the slash commands
(:mod:`ikigai_core.commands.chat_agents`) so the chat session holds it without importing them."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from ikigai_core.commands.output import warn

if TYPE_CHECKING:
    from ikigai_core.orchestration import AgentEvent, Supervisor

ACTIVE = ("queued", "running")


class AgentsView:
    """What the chat shows of its sub-agents: each one's end, said between turns (a
    child ends on its own thread, while the prompt may be up), and the status line's word.
    """

    def __init__(self) -> None:
        self.supervisor: Supervisor | None = None
        self.news: deque[str] = deque()
        self.interject: Callable[[Callable[[], object]], bool] = lambda say: False
        """How the front end says something at the prompt from another thread (the
        rendered one's :meth:`~ikigai_core.commands.lineinput.LineInput.interject`)."""
        self.redraw: Callable[[], object] = lambda: None
        """How the front end shows the status line anew from another thread."""
        self._lock = threading.Lock()

    def event(self, event: AgentEvent) -> None:
        """The supervisor's listener (any thread): a line for a child that ended, said at
        once at the prompt (which comes back drawn anew), else after the turn; for any
        other news (a child queued, started, its tokens counted) the status line is
        redrawn."""
        if event.kind != "ended":
            self.redraw()
            return
        why = f": {event.error}" if event.error and event.status != "done" else ""
        with self._lock:
            self.news.append(f"agent {event.name} ({event.id}) {event.status}{why}")
        self.interject(self.say_news)

    def say_news(self) -> None:
        """Say (on the main thread) which children ended since the last time."""
        with self._lock:
            lines, self.news = list(self.news), deque()
        for line in lines:
            warn(line)

    def status_word(self) -> str | None:
        """``agents: 2 running, 1 queued · 1,234 tokens``; ``None`` before the first fork."""
        if self.supervisor is None:
            return None
        agents = self.supervisor.list()
        if not agents:
            return None
        counts = [f"{sum(a.status == s for a in agents)} {s}" for s in ACTIVE
                  if any(a.status == s for a in agents)]
        tokens = self.supervisor.usage()["children"]["total"]
        return f"agents: {', '.join(counts) or 'none running'} · {tokens:,} tokens"
