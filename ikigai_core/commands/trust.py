"""``ikigai trust`` and ``ikigai untrust``: which projects may run their ``.ikigai/tools``."""

from __future__ import annotations

from pathlib import Path

import click

from ikigai_core.app import App
from ikigai_core.commands.output import printable
from ikigai_core.project import INSTRUCTIONS
from ikigai_core.trust import TrustStore

pass_app = click.make_pass_decorator(App)
directory_arg = click.argument(
    "directory", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)


@click.command("trust")
@directory_arg
@click.option("--list", "list_", is_flag=True, help="List the trusted directories.")
@pass_app
def trust(app: App, directory: Path | None, list_: bool) -> None:
    """Let DIRECTORY's .ikigai/tools run (default: the project you are in)."""
    store = TrustStore(app.home)
    if list_:
        if directory is not None:
            raise click.UsageError("--list takes no DIRECTORY")
        trusted = store.directories()
        for path in trusted:
            click.echo(printable(str(path)))
        if not trusted:
            click.echo("No trusted directories.")
        return
    resolved, _ = store.trust(directory or app.project or app.cwd)
    if (resolved / ".ikigai" / "tools").is_dir():
        said = f"Trusted {resolved}: its .ikigai/tools will be loaded."
    else:
        said = f"Trusted {resolved}; it has no .ikigai/tools yet (tools put there will be loaded)."
    if (resolved / INSTRUCTIONS).is_file():
        said += f" Its {INSTRUCTIONS} will be sent to the model."
    click.echo(printable(said))


@click.command("untrust")
@directory_arg
@pass_app
def untrust(app: App, directory: Path | None) -> None:
    """Stop running DIRECTORY's .ikigai/tools (default: the project you are in)."""
    resolved, was_trusted = TrustStore(app.home).untrust(directory or app.project or app.cwd)
    if was_trusted:
        click.echo(printable(f"No longer trusted: {resolved}"))
    else:
        click.echo(printable(f"{resolved} was not trusted; nothing changed."))
