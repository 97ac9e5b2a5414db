"""``ikigai permissions``: review, add and revoke the rules deciding tool calls.

Added through the approvals plugin's ``ikigai_commands`` hook.
"""

from __future__ import annotations

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable, warn

pass_app = click.make_pass_decorator(App)
CONDITIONS_HELP = ("Each CONDITION is POINTER~REGEX (the argument at the JSON pointer matches "
                   "the regular expression) or POINTER=VALUE (it equals the JSON value).")


@click.group("permissions")
def permissions() -> None:
    """Rules deciding which tool calls run without asking ($IKIGAI_HOME/permissions.json)."""


@permissions.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the rules as JSON.")
@pass_app
def list_rules(app: App, as_json: bool) -> None:
    """Show every rule with its number."""
    from ikigai_core.permissions import RuleStore  # not on `ikigai --help`'s path

    rules = RuleStore(app.home).rules()
    if as_json:
        echo_json([rule.to_json() for rule in rules])
    elif not rules:
        click.echo("No rules: file_read, glob and grep run; every other tool asks.")
    for rule in [] if as_json else rules:
        click.echo(printable(str(rule)))


def _adder(decision: str) -> click.Command:
    verb = {"allow": "Allow", "ask": "Ask before", "deny": "Deny"}[decision]

    @click.command(decision, help=f"{verb} calls of TOOL (a name or a glob) that meet every "
                                  f"CONDITION. {CONDITIONS_HELP}")
    @click.argument("tool")
    @click.argument("conditions", nargs=-1, metavar="[CONDITION]...")
    @pass_app
    def add(app: App, tool: str, conditions: tuple[str, ...]) -> None:
        from ikigai_core.permissions import RuleStore, parse_condition

        rule = RuleStore(app.home).add(tool, decision, [parse_condition(c) for c in conditions])
        click.echo(printable(f"Stored {rule}"))
        if not _known(app, tool):
            warn(f"no tool found now matches '{tool}' (`ikigai tool list` shows them); the "
                 "rule is kept for when one comes")

    return add


def _known(app: App, tool: str) -> bool:
    """Whether a tool found now is named ``tool`` (or matches it, a glob)."""
    from fnmatch import fnmatchcase

    return any(fnmatchcase(name, tool) for name in app.registry())


for _decision in ("allow", "ask", "deny"):
    permissions.add_command(_adder(_decision))


@permissions.command("remove")
@click.argument("number", type=int, metavar="ID")
@pass_app
def remove(app: App, number: int) -> None:
    """Revoke rule ID (`ikigai permissions list` shows the numbers)."""
    from ikigai_core.permissions import RuleStore

    rule = RuleStore(app.home).remove(number)
    click.echo(printable(f"Removed {rule}"))
