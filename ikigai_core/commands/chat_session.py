"""The chat's side of one conversation: the core :class:`~ikigai_core.session.Session`, the
tools discovered in the background, the front end, and what the last message did."""

from __future__ import annotations

import itertools
import sys
from contextlib import suppress
from typing import TYPE_CHECKING, cast

import click

from ikigai_core.commands.agents_view import AgentsView
from ikigai_core.commands.output import printable, warn
from ikigai_core.commands.reporting import report_empty, report_unfit
from ikigai_core.commands.tools import report_skipped
from ikigai_core.conversation import UserMessage
from ikigai_core.errors import IkigaiError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ikigai_core.agent import Agent
    from ikigai_core.app import App
    from ikigai_core.attachments import Attachment
    from ikigai_core.commands.chatview import FrontEnd
    from ikigai_core.conversation import Conversation, Usage
    from ikigai_core.discovery import Discovery
    from ikigai_core.grants import Grants
    from ikigai_core.inputs import Prompt
    from ikigai_core.registry import Registry
    from ikigai_core.session import Session

SPIN_INTERVAL = 0.1
SPINNER = "|/-\\"


class ChatSession:
    """One chat: its core session, the tools (discovered in the background), the front end.

    :param session: the conversation, as the command line starts it; ``/clear`` goes back
        to that start, even after :meth:`resume`.
    :param discovery: the start-up discovery, already started.
    :param front: how the chat looks (plain or rendered).
    """

    def __init__(self, session: Session, discovery: Discovery, front: FrontEnd,
                 images: Sequence[Attachment] = ()):
        self.session = session
        self.discovery = discovery
        self.front = front
        self.images = tuple(images)
        """The images ``--image`` attaches to the next message sent."""
        self.failure: IkigaiError | None = None
        """Why the last message sent to the model failed; ``None`` once one succeeds."""
        self.agents = AgentsView()
        """Its sub-agents as the chat shows them (``/fork``, ``/agents``, the status line)."""

    @property
    def app(self) -> App:
        """The invocation."""
        return self.session.app

    @property
    def agent(self) -> Agent:
        """The model and its tools."""
        return self.session.agent

    @property
    def conversation(self) -> Conversation:
        """The conversation so far."""
        return self.session.conversation

    @property
    def turn_usage(self) -> Usage:
        """Tokens the last prompt used (every model turn it took)."""
        return self.session.turn_usage

    @property
    def usage(self) -> Usage:
        """Tokens this chat used."""
        return self.session.usage

    @property
    def cost(self) -> float | None:
        """US dollars this chat cost, its sub-agents' included (``None``: a price was not
        known)."""
        return self.session.total_cost

    def agents_status(self) -> str | None:
        """The status line's word for the sub-agents (``None``: there are none)."""
        return self.agents.status_word()

    @property
    def grants(self) -> Grants:
        """What the chat's session approves without asking now (``/approve`` changes it)."""
        return self.session.grants

    @property
    def registry(self) -> Registry | None:
        """The tools, once discovered (``/refresh`` replaces them)."""
        return cast("Registry | None", self.session.registry)

    @registry.setter
    def registry(self, registry: Registry) -> None:
        self.session.registry = registry

    def resume(self, session: str | None, last: bool) -> None:
        """Go on with the conversation ``session`` (``--resume``), or with ``last`` the last
        one here (``--continue``), its skills loaded again; neither: nothing changes."""
        if self.session.resume(session, last=last):
            prompts = sum(isinstance(m, UserMessage) and m.skill is None
                          for m in self.conversation.messages)
            warn(f"continuing session {self.session.recorder.session_id} "
                 f"({prompts} earlier prompts)")

    def send(self, message: str) -> None:
        """Send ``message`` (the files its ``@path`` words name attached) to the model and
        show the turn; remember whether it failed."""
        from ikigai_core.inputs import with_mentions

        self.failure = None
        try:
            prompt = with_mentions(message, self.app.cwd, self.images)
            if prompt.images or prompt.files:
                click.echo(printable(attached_line(prompt)))
            self.tools()
            reply = self.session.send(prompt.text, prompt.images)
        except IkigaiError as exc:
            self.failure = exc
            raise
        self.images = ()
        report_empty(reply)

    def tools_found(self) -> Registry | None:
        """The registry if discovery has ended (never waits): completion offers its names."""
        if self.registry is not None:
            return self.registry
        with suppress(IkigaiError):  # the failure is reported when a message needs tools
            return self.discovery.wait(0)
        return None

    def tools(self) -> Registry:
        """The registry, waiting for discovery the first time (a spinner on a terminal)."""
        if self.registry is None:
            registry = wait_for_tools(self.discovery, spin=sys.stderr.isatty())
            report_skipped(registry, verbose=False)
            report_unfit(self.agent.provider, registry)
            self.session.use_tools(registry)
            return registry
        return self.registry


def attached_line(prompt: Prompt) -> str:
    """``attached: notes.md, shot.png (image/png, 12 KiB)``: what a message attached."""
    images = [f"{image.mime_type}, {max(len(image.data) // 1024, 1)} KiB"
              for image in prompt.images]
    named = ", ".join(prompt.files) or "--image"
    return f"attached: {named} ({'; '.join(images) or 'text'})"


def wait_for_tools(discovery: Discovery, *, spin: bool) -> Registry:
    """Wait for ``discovery``; with ``spin``, show a spinner on stderr meanwhile."""
    frames = itertools.cycle(SPINNER)
    shown = False
    while (registry := discovery.wait(SPIN_INTERVAL if spin else None)) is None:
        shown = True
        click.echo(f"\r{next(frames)} discovering tools...", nl=False, err=True)
    if shown:
        click.echo("\r\x1b[K", nl=False, err=True, color=True)  # erase the spinner line
    return registry
