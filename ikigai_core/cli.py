"""The ``ikigai`` command: a thin click group; each command lives in ``ikigai_core/commands``."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn

import click

from ikigai_core import __version__
from ikigai_core.app import App
from ikigai_core.commands.output import printable, warn
from ikigai_core.errors import IkigaiError
from ikigai_core.notices import Notice, Notices


class Failure(click.ClickException):
    """An :class:`IkigaiError` on its way out: one line on stderr, the error's exit code."""

    def __init__(self, error: IkigaiError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click declares a class default

    def show(self, file: Any = None) -> None:
        click.echo(f"ikigai: {printable(self.message, keep_newlines=False)}", err=True)


COMMANDS = {
    "tool": ("ikigai_core.commands.tools:tool_group",
             "List, inspect and run the discovered tools."),
    "refresh": ("ikigai_core.commands.tools:refresh",
                "Ask every tool for its schema again and say what changed."),
    "trust": ("ikigai_core.commands.trust:trust",
              "Let DIRECTORY's .ikigai/tools run (default: the project you are in)."),
    "untrust": ("ikigai_core.commands.trust:untrust",
                "Stop running DIRECTORY's .ikigai/tools (default: the project you are in)."),
    "plugins": ("ikigai_core.commands.plugins:plugins",
                "List every plugin: name, distribution and version, hooks, whether built in."),
    "request": ("ikigai_core.commands.agent:request", "Print the request body ikigai would send"
                " for PROMPT: the system prompt and the chosen tools (no network, no key)."),
    "ask": ("ikigai_core.commands.agent:ask",
            "Ask the model PROMPT once: the answer on stdout, the tools it calls on stderr."),
    "chat": ("ikigai_core.commands.chat:chat", "Talk with the model; /help lists the commands."),
    "batch": ("ikigai_core.commands.batch:batch",
              "Run every task of TASKS.jsonl as a session; append each result to a JSONL file."),
    "sessions": ("ikigai_core.commands.sessions:sessions",
                 "The recorded conversations of ask and chat (the sessions_url store)."),
    "skill": ("ikigai_core.commands.skills:skill_group",
              "List and show the skills the model can load."),
    "agents": ("ikigai_core.commands.agents:agents_group",
               "List and show the agent definitions sub-agents are forked from."),
    "keys": ("ikigai_core.commands.keys:keys_group",
             "Store provider API keys: the system keyring, else $IKIGAI_HOME/keys.json."),
    "models": ("ikigai_core.commands.models:models",
               "List each provider's models (its API, cached a day) with context windows "
               "and prices."),
}
"""Every command: where it lives and its one-line summary. A command's module is imported
only when it runs, so ``ikigai tool list`` never pays for the agent loop's imports (httpx)
and ``ikigai --help`` imports none (tests check the summaries against the commands')."""


def print_notice(notice: Notice) -> None:
    """Show one of the core's notices as it arrives: ``ikigai: ...`` on stderr."""
    warn(notice.message)


def app_of(ctx: click.Context) -> App:
    """This invocation's :class:`App`, made on first use (before the group's callback when
    a plugin command has to be found)."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = App(notices=Notices(print_notice))
    app: App = root.obj
    return app


def load_command(name: str) -> click.Command:
    """The command called ``name`` (a key of :data:`COMMANDS`), its module imported now."""
    from ikigai_core.entrypoints import load_target

    command: click.Command = load_target(COMMANDS[name][0])
    return command


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: ``$COLUMNS``, else the width of the terminal
    on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout, or not a terminal
            columns = 0
    return columns or 80


class HelpFormatter(click.HelpFormatter):
    """click's, given the width click would ask ``shutil`` for: importing ``shutil`` (with
    ``bz2`` and ``lzma``) was 3 % of ``ikigai --help`` (the start-up ledger)."""

    def __init__(self, indent_increment: int = 2, width: int | None = None,
                 max_width: int | None = None) -> None:
        if width is None and click.formatting.FORCED_WIDTH is None:
            width = max(min(terminal_columns(), max_width or 80) - 2, 50)
        super().__init__(indent_increment, width, max_width)


class Context(click.Context):
    """The ``ikigai`` group's context: its help is laid out by :class:`HelpFormatter`."""

    formatter_class = HelpFormatter


class IkigaiGroup(click.Group):
    """The ``ikigai`` group: commands loaded on demand, plugin commands through the
    ``ikigai_commands`` hook, expected errors as one-line failures."""

    context_class = Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.plugin_commands(ctx)})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return self.plugin_commands(ctx).get(cmd_name)
        return load_command(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with its whole summary (click cuts them to fit one line)."""
        plugins = self.plugin_commands(ctx)
        rows = [(name, COMMANDS[name][1]) if name in COMMANDS
                else (name, plugins[name].get_short_help_str(limit=1 << 16))
                for name in self.list_commands(ctx)
                if name in COMMANDS or not plugins[name].hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def plugin_commands(self, ctx: click.Context) -> dict[str, click.Command]:
        """The commands plugins add; one named like a built-in command is reported, skipped."""
        cached: dict[str, click.Command] | None = ctx.meta.get("ikigai.plugin_commands")
        if cached is None:
            try:
                cached = _collect_commands(app_of(ctx))
            except IkigaiError as exc:
                raise Failure(exc) from exc
            ctx.meta["ikigai.plugin_commands"] = cached
        return cached

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IkigaiError as exc:
            raise Failure(exc) from exc


def _collect_commands(app: App) -> dict[str, click.Command]:
    from ikigai_core.hookcall import collect

    def problem(command: object) -> str | None:
        if not isinstance(command, click.Command) or not command.name:
            return f"it gave {type(command).__name__}, not a named click command"
        if command.name in COMMANDS:
            return f"its command '{command.name}' is an ikigai command already"
        return None

    found: dict[str, click.Command] = {}
    for plugin, command in collect(app.pm, "ikigai_commands", app.notices, problem):
        if command.name in found:
            app.notices.report(f"plugin '{plugin}': command '{command.name}' is added by "
                               "another plugin already; skipped", plugin=plugin)
        else:
            found[command.name] = command
    return found


@click.group(cls=IkigaiGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="ikigai")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Give LLM agents tools: external executables, discovered and run safely.

    Without a command, on a terminal: chat.
    """
    app_of(ctx)
    if ctx.invoked_subcommand is None:
        if not (sys.stdin.isatty() and sys.stdout.isatty()):  # a pipe or a script: the usage
            click.echo(ctx.get_help(), err=True)
            sys.exit(2)
        ctx.invoke(load_command("chat"))


def _terminate(signum: int, frame: Any) -> NoReturn:
    """SIGTERM and SIGHUP unwind like Ctrl-C, so running tools' process groups are killed."""
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> None:
    """Run one ``ikigai`` command line: expected errors are one line on stderr, never a
    traceback. Changes no process-wide state (the collector, signal handlers): tests and
    programs embedding ikigai call it; :func:`run` is the program's own entry."""
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


def run() -> None:
    """The ``ikigai`` program (``bin/ikigai``, ``python -m ikigai_core.cli``): SIGTERM, and
    SIGHUP (its terminal closed) unless it is ignored (``nohup``), unwind like Ctrl-C, so
    running tools' process groups and sub-agents are stopped; a SIGKILL's are stopped by
    :mod:`ikigai_core.orphan_guard`'s watcher. Then :func:`main`."""
    # `signal`'s own module builds its enums at import; its C core sets the same handler
    # without them (the start-up ledger). Commands that run tools import `signal` later.
    import _signal

    from ikigai_core import orphan_guard

    _signal.signal(_signal.SIGTERM, _terminate)
    if _signal.getsignal(_signal.SIGHUP) is not _signal.SIG_IGN:
        _signal.signal(_signal.SIGHUP, _terminate)
    orphan_guard.enable()  # and SIGKILL leaves no tool running
    main()


if __name__ == "__main__":
    run()
