"""``ikigai models``: each provider's models with context windows (:mod:`ikigai_core.models`)
and prices where known (:mod:`ikigai_core.prices`); the warning ``--model`` and ``/model``
give for a name no one lists."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable, warn
from ikigai_core.models import KNOWN, Listing, list_models, unknown_model

if TYPE_CHECKING:
    from ikigai_core.providers import Provider

pass_app = click.make_pass_decorator(App)
SOURCES = {"api": "asked now", "cache": "cached", "known": "built-in list"}


@click.command("models")
@click.option("--provider", metavar="NAME", help="Only this provider's models.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: per provider, its models' context windows, their prices "
                   "where known and the source.")
@click.option("--refresh", is_flag=True, help="Ask the APIs even when a list is cached.")
@pass_app
def models(app: App, provider: str | None, as_json: bool, refresh: bool) -> None:
    """List each provider's models (its API, cached a day) with context windows and prices.

    Prices are US dollars per million input and output tokens, where known.

    Offline, or when the API refuses: the last list kept, else a built-in one, with one
    line on stderr saying why."""
    from ikigai_core.providers import collect_providers, get_provider

    chosen = ([get_provider(app.pm, provider, app.notices)] if provider
              else list(collect_providers(app.pm, app.notices).values()))
    listings = [list_models(p, app.environ, app.home, refresh=refresh) for p in chosen]
    for listing in listings:
        if listing.problem:
            fallback = "the built-in list" if listing.source == KNOWN else "the cached list"
            warn(f"{listing.provider}: {listing.problem}; showing {fallback}")
    prices = [_prices(listing) for listing in listings]
    if as_json:
        echo_json({listing.provider: {
            "source": listing.source, "models": dict(listing.models),
            "prices": {name: {"input": found[0], "output": found[1]}
                       for name, found in priced.items() if found is not None}}
            for listing, priced in zip(listings, prices, strict=True)})
        return
    for listing, priced in zip(listings, prices, strict=True):
        _print(listing, priced)


def _prices(listing: Listing) -> dict[str, tuple[float, float] | None]:
    """Each listed model's price per million input and output tokens, where known."""
    from ikigai_core.prices import per_million

    return {name: per_million(listing.provider, name) for name in listing.models}


def _print(listing: Listing, prices: dict[str, tuple[float, float] | None]) -> None:
    """``provider  model  context  price`` lines, the source in the first."""
    width = max(map(len, listing.models), default=0)
    click.echo(printable(f"{listing.provider} ({SOURCES[listing.source]}, "
                         f"{len(listing.models)} models)"))
    for name, window in listing.models.items():
        shown = f"{window:,} tokens" if window else "context unknown"
        price = prices.get(name)
        if price is not None:
            shown = f"{shown:<16}  ${price[0]:.2f} in, ${price[1]:.2f} out per M tokens"
        click.echo(printable(f"  {name:<{width}}  {shown}"))


def warn_unknown_model(app: App, provider: Provider, model: str) -> None:
    """On stderr: ``model`` is not among ``provider``'s listed models, with the closest
    name; it is still used (a new model may not be listed yet)."""
    line = unknown_model(provider, model, app.home, app.environ)
    if line:
        warn(line)
