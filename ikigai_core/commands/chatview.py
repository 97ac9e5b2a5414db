"""What a front end is (:class:`FrontEnd`) and what it reads of the chat it shows
(:class:`ChatView`): a module of its own, below both the chat and its front ends, so
neither imports the other."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Protocol

from ikigai_core.session import SessionEvents

if TYPE_CHECKING:
    from ikigai_core.agent import Agent
    from ikigai_core.app import App
    from ikigai_core.conversation import Usage
    from ikigai_core.grants import Grants
    from ikigai_core.registry import Registry


class ChatView(Protocol):
    """The chat as its front end sees it: the banner, the status line, completion."""

    @property
    def app(self) -> App:
        """The invocation."""

    @property
    def agent(self) -> Agent:
        """The model (``agent.provider.name``, ``agent.model``) and its tools."""

    @property
    def turn_usage(self) -> Usage:
        """Tokens the last prompt used."""

    @property
    def usage(self) -> Usage:
        """Tokens the chat used."""

    @property
    def cost(self) -> float | None:
        """US dollars the chat cost (``None``: a price was not known)."""

    def tools_found(self) -> Registry | None:
        """The tools, if discovery has ended (never waits)."""

    def agents_status(self) -> str | None:
        """What the status line says of the sub-agents (``None``: nothing)."""

    @property
    def grants(self) -> Grants:
        """What the chat approves without asking now (the status line's ``approve:``)."""


class FrontEnd(SessionEvents, Protocol):
    """What ``ask`` and ``chat`` show (the session's events), and where ``chat`` reads its
    lines."""

    show_thinking: bool
    """Whether the model's thinking is shown (dimmed) or dropped."""

    def thinking(self, piece: str) -> None:
        """A piece of the model's thinking arrived: shown if :attr:`show_thinking`."""

    def end_line(self) -> None:
        """Finish what the model wrote so far (a line of its own for what comes next)."""

    def started(self, chat: ChatView, guard: str) -> None:
        """The chat is about to read its first line; ``guard`` says how tools are guarded."""

    def cleared(self) -> None:
        """``/clear`` started a new conversation."""

    def lines(self) -> Iterator[str]:
        """The lines the user sends, until they leave."""

    def interject(self, say: Callable[[], object]) -> bool:
        """Run ``say`` at the prompt now, from any thread (a sub-agent's end); ``False``
        when this front end cannot (the chat says it after the turn)."""

    def redraw(self) -> None:
        """Show the status line anew soon, from any thread (a sub-agent's tokens grew);
        nothing when no status line is up."""


def chatting_with(chat: ChatView) -> str:
    """``chatting with openai gpt-4o in project /src/app``: the banner's start."""
    where = f" in project {chat.app.project}" if chat.app.project else ""
    return f"chatting with {chat.agent.provider.name} {chat.agent.model}{where}"
