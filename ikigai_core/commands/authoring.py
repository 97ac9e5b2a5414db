"""``ikigai tool new`` and ``ikigai tool test``: for people who write tools."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import click

from ikigai_core.app import App
from ikigai_core.commands.output import dumps, printable, warn
from ikigai_core.errors import IkigaiError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from ikigai_core.execution import CallResult

pass_app = click.make_pass_decorator(App)
WATCH_INTERVAL = 0.05
"""Seconds between two looks at a watched tool's file (a stat: no inotify needed)."""


@click.command("new")
@click.argument("name")
@click.option("--lang", "lang", required=True, metavar="LANG",
              help="python, bash, node, go or c.")
@click.option("--user", is_flag=True,
              help="Into $IKIGAI_HOME/tools (default: this project's .ikigai/tools).")
@click.option("--force", is_flag=True, help="Replace files that exist.")
@pass_app
def new_tool(app: App, name: str, lang: str, user: bool, force: bool) -> None:
    """Write a runnable NAME-tool in LANG, and a test beside it."""
    from ikigai_core.scaffold import new_tool as scaffold

    started = time.monotonic()
    root = app.project or app.cwd
    directory = app.home / "tools" if user else root / ".ikigai" / "tools"
    user = user or (root / ".ikigai").resolve() == app.home.resolve()  # ~ is no project
    made = scaffold(directory, name, lang, force=force)
    took = time.monotonic() - started
    built = f" (built from {made.source.name})" if made.source else ""
    click.echo(printable(f"Wrote {made.tool}{built} and {made.test.name} in {took:.2f} s.\n"
                         f"Try it:  ikigai tool test {name} '{{\"text\": \"hi\"}}'\n"
                         f"Test it: pytest {made.test}  (needs pytest-ikigai)"))
    if not user:
        click.echo(printable(_trust_note(app, root)))


def _trust_note(app: App, project: Path) -> str:
    from ikigai_core.trust import TrustStore

    if TrustStore(app.home).is_trusted(project):
        return f"The project {project} is trusted: `ikigai tool list` shows the tool now."
    return (f"The project {project} is not trusted, so its tools are not listed nor run: "
            f"run `ikigai trust {project}` first.")


@click.command("test")
@click.argument("name")
@click.argument("args_json", default="{}")
@click.option("--watch", is_flag=True,
              help="Run again each time the tool's file changes, until Ctrl-C.")
@pass_app
def test_tool(app: App, name: str, args_json: str, watch: bool) -> None:
    """Call tool NAME once with ARGS_JSON (default {}) through the real executor, approvals
    off and the sandbox as configured; print the envelope, and the time on stderr.

    Exits 0 when tool_success is true, 1 otherwise; --watch runs until Ctrl-C."""
    from ikigai_core.strictjson import loads

    try:
        arguments = loads(args_json)
    except ValueError as exc:
        raise UsageError(f"ARGS_JSON is not valid JSON ({exc}); pass an object such as "
                         f"'{{\"text\": \"hi\"}}'") from None
    called = _call_once(app, name, arguments)
    if not watch:
        raise SystemExit(0 if called.outcome.success else 1)
    path = app.registry()[name].path
    if path is None:
        raise IkigaiError(f"tool '{name}' has no file to watch")
    seen = _state(path)  # before saying so: an edit made once the user sees it is a change
    warn(f"watching {path}; Ctrl-C stops")
    while True:
        time.sleep(WATCH_INTERVAL)
        now = _state(path)
        if now != seen and now is not None:
            seen = now
            try:
                _call_once(app, name, arguments)
            except IkigaiError as exc:  # broken for now: say why, wait for the next save
                warn(str(exc))


def _state(path: Path) -> tuple[int, int, int] | None:
    """What changes when the file is written or replaced; ``None`` while it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _call_once(app: App, name: str, arguments: Any) -> CallResult:
    """Discover (asking a changed tool for its schema again), call, print."""
    registry = app.registry()
    if name not in registry:
        raise IkigaiError(registry.why_missing(name) or
                          f"unknown tool '{name}'; see `ikigai tool list`")
    started = time.monotonic()
    called = app.executor.call(registry, name, arguments)
    took = (time.monotonic() - started) * 1000
    click.echo(dumps(called.envelope, indent=2))
    state = "ok" if called.outcome.success else called.outcome.error_code
    warn(f"{name}: {state} in {took:.1f} ms")
    return called
