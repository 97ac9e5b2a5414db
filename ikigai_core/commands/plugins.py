"""``ikigai plugins``: what is installed and which hooks each plugin implements."""

from __future__ import annotations

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable

pass_app = click.make_pass_decorator(App)


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array on stdout.")
@pass_app
def plugins(app: App, as_json: bool) -> None:
    """List every plugin: name, distribution and version, hooks, whether built in."""
    from ikigai_core.plugin_info import list_plugins

    infos = list_plugins(app.pm)
    if as_json:
        echo_json([info._asdict() for info in infos])
        return
    for info in infos:
        dist = f"{info.distribution} {info.version}" if info.distribution else "(no distribution)"
        builtin = "  [builtin]" if info.builtin else ""
        click.echo(printable(f"{info.name}  {dist}{builtin}\n    hooks: {', '.join(info.hooks)}"))

