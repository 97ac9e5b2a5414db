"""Sub-agents in ``ikigai sessions``: a conversation's tree of children (``show``), and
their tokens rolled into the conversation they were forked from (``list``; issue 25)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikigai_core.sessions import SessionSummary


class Tree:
    """The recorded conversations and which were forked from which.

    :param found: every summary (``SessionStore.sessions()``); a child whose parent is not
        recorded (removed) counts as a conversation of its own.
    """

    def __init__(self, found: Sequence[SessionSummary]) -> None:
        self.by_id = {s.id: s for s in found}
        self.children: dict[str, list[SessionSummary]] = {}
        for s in reversed(found):  # oldest first: in the order they were forked
            if s.parent is not None and s.parent in self.by_id:
                self.children.setdefault(s.parent, []).append(s)

    def roots(self) -> list[SessionSummary]:
        """The conversations no recorded one forked, most recent first."""
        return [s for s in self.by_id.values() if s.parent is None or s.parent not in
                self.by_id or not self._reaches_root(s)]

    def _reaches_root(self, s: SessionSummary) -> bool:
        """Whether following ``parent`` from ``s`` ends (a damaged row may loop)."""
        seen = {s.id}
        while s.parent is not None and s.parent in self.by_id:
            if s.parent in seen:
                return False
            seen.add(s.parent)
            s = self.by_id[s.parent]
        return True

    def descendants(self, session_id: str) -> Iterator[tuple[int, SessionSummary]]:
        """``(depth, summary)`` below ``session_id`` (children at depth 1), each parent
        before its children; each conversation once, even in a damaged loop."""
        seen = {session_id}

        def walk(parent: str, depth: int) -> Iterator[tuple[int, SessionSummary]]:
            for child in self.children.get(parent, ()):
                if child.id not in seen:
                    seen.add(child.id)
                    yield depth, child
                    yield from walk(child.id, depth + 1)

        return walk(session_id, 1)

    def rolled_up(self, s: SessionSummary) -> dict[str, Any]:
        """``s``'s tokens and cost with every descendant's, and how many there are
        (``agents``); ``cost`` is ``None`` once any one's is unknown."""
        everyone = [s, *(d for _, d in self.descendants(s.id))]
        costs = [each.cost for each in everyone]
        return {"agents": len(everyone) - 1,
                "input_tokens": sum(each.input_tokens for each in everyone),
                "output_tokens": sum(each.output_tokens for each in everyone),
                "cost": None if None in costs else sum(c for c in costs if c is not None)}


def tree_lines(tree: Tree, session_id: str, *, markdown: bool = False) -> list[str]:
    """A heading and one indented line per descendant: its session id, agent definition,
    status, tokens and the prompt it was forked after (``markdown``: a nested list under
    ``## Sub-agents``); no descendants, no lines."""
    lines = [f"{'  ' * (depth - 1)}{'- ' if markdown else '  '}{d.id}  {d.agent or 'agent'}  "
             f"{d.status or '?'}  {d.input_tokens + d.output_tokens} tokens"
             + ("" if d.fork_turn is None else f"  (forked after prompt {d.fork_turn + 1})")
             for depth, d in tree.descendants(session_id)]
    if not lines:
        return []
    return ["## Sub-agents", "", *lines] if markdown else ["Sub-agents:", *lines]


def tree_json(tree: Tree, session_id: str) -> list[dict[str, Any]]:
    """The descendants of ``session_id`` for ``sessions show --json``, parents first."""
    return [{"id": d.id, "parent": d.parent, "depth": depth, "agent": d.agent,
             "status": d.status, "fork_turn": d.fork_turn, "input_tokens": d.input_tokens,
             "output_tokens": d.output_tokens, "cost": d.cost}
            for depth, d in tree.descendants(session_id)]
