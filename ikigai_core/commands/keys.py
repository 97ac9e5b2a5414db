"""``ikigai keys``: store, list and remove provider API keys (see :mod:`ikigai_core.keys`)."""

from __future__ import annotations

import sys

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable
from ikigai_core.errors import UsageError
from ikigai_core.keys import KeyStore, key_source

pass_app = click.make_pass_decorator(App)


@click.group("keys")
def keys_group() -> None:
    """Store provider API keys: the system keyring, else $IKIGAI_HOME/keys.json.

    Environment variables (OPENAI_API_KEY, ...) still win over a stored key.
    """


@keys_group.command("set")
@click.argument("provider")
@pass_app
def set_key(app: App, provider: str) -> None:
    """Store PROVIDER's key: typed without echo, or read from stdin when piped."""
    from ikigai_core.providers import get_provider

    get_provider(app.pm, provider, app.notices)
    if sys.stdin.isatty():
        key = click.prompt(f"{provider} API key", hide_input=True, err=True)
    else:
        key = sys.stdin.read()
    key = key.strip()
    if not key or any(ch.isspace() for ch in key):
        raise UsageError(f"the key read for '{provider}' is empty or holds spaces; "
                         f"pipe just the key: ikigai keys set {provider} < FILE")
    where = KeyStore(app.home).set(provider, key)
    place = "the system keyring" if where == "keyring" else str(KeyStore(app.home).path)
    click.echo(printable(f"Stored the key of {provider} in {place}."))


@keys_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: provider -> source.")
@pass_app
def list_keys(app: App, as_json: bool) -> None:
    """Each provider and where its key comes from (a variable, keyring, keys.json), never
    the key."""
    from ikigai_core.providers import collect_providers

    stored = KeyStore(app.home).stored()
    providers = collect_providers(app.pm, app.notices)
    sources = {name: key_source(provider, app.environ, stored)
               for name, provider in providers.items()}
    sources.update((name, "keyring" if where == "keyring" else "keys.json")
                   for name, where in stored.items() if name not in providers)
    if as_json:
        echo_json(sources)
        return
    width = max(map(len, sources), default=0)
    for name, source in sorted(sources.items()):
        shown = source or "no key"
        if name not in providers:
            shown += " (provider not installed)"
        click.echo(printable(f"{name:<{width}}  {shown}"))


@keys_group.command("remove")
@click.argument("provider")
@pass_app
def remove_key(app: App, provider: str) -> None:
    """Forget the key stored for PROVIDER (its environment variable is not touched)."""
    KeyStore(app.home).remove(provider)
    click.echo(printable(f"Removed the stored key of {provider}."))
