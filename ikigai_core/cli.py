"""The ``ikigai`` command: a thin click group; each command lives in ``ikigai_core/commands``."""

from __future__ import annotations

import importlib
import signal
import sys
from typing import Any, NoReturn

import click

from ikigai_core import __version__
from ikigai_core.app import App
from ikigai_core.errors import IkigaiError
from ikigai_core.output import printable


class Failure(click.ClickException):
    """An :class:`IkigaiError` on its way out: one line on stderr, the error's exit code."""

    def __init__(self, error: IkigaiError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click declares a class default

    def show(self, file: Any = None) -> None:
        click.echo(f"ikigai: {printable(self.message, keep_newlines=False)}", err=True)


COMMANDS = {
    "tool": "ikigai_core.commands.tools:tool_group",
    "refresh": "ikigai_core.commands.tools:refresh",
    "trust": "ikigai_core.commands.trust:trust",
    "untrust": "ikigai_core.commands.trust:untrust",
    "plugins": "ikigai_core.commands.plugins:plugins",
    "request": "ikigai_core.commands.agent:request",
    "ask": "ikigai_core.commands.agent:ask",
    "chat": "ikigai_core.commands.agent:chat",
}
"""Every command, by where it lives: a command's module is imported only when it runs,
so ``ikigai tool list`` never pays for the agent loop's imports (httpx)."""


class IkigaiGroup(click.Group):
    """The ``ikigai`` group: commands loaded on demand, expected errors as one-line failures."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr = COMMANDS[cmd_name].split(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IkigaiError as exc:
            raise Failure(exc) from exc


@click.group(cls=IkigaiGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="ikigai")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Give LLM agents tools: external executables, discovered and run safely."""
    ctx.obj = App()


def _terminate(signum: int, frame: Any) -> NoReturn:
    """SIGTERM unwinds like Ctrl-C, so running tools' process groups are killed."""
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: expected errors are one line on stderr, never a traceback."""
    signal.signal(signal.SIGTERM, _terminate)
    try:
        cli.main(args=argv, prog_name="ikigai", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("ikigai: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("ikigai: interrupted", err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()
