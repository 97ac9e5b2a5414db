"""``ikigai audit``: the last calls in the audit log, one line each (or as JSON)."""

from __future__ import annotations

import os

import click

from ikigai_example_audit.names import LOG_ENV


@click.command("audit")
@click.option("-n", "count", default=10, show_default=True, type=click.IntRange(min=1),
              help="How many of the last calls to show.")
@click.option("--json", "as_json", is_flag=True, help="Print the entries as a JSON list.")
def audit(count: int, as_json: bool) -> None:
    """Show the last tool calls in the audit log ($IKIGAI_AUDIT_LOG)."""
    import json  # here: `ikigai --help` builds this command to list it

    path = os.environ.get(LOG_ENV)
    if not path:
        raise click.UsageError(f"no audit log: set {LOG_ENV} to a file and run some tools")
    try:
        with open(path, encoding="utf-8") as log:
            lines = log.read().splitlines()[-count:]
    except FileNotFoundError:
        lines = []
    except OSError as exc:
        raise click.ClickException(f"cannot read the audit log {path}: {exc.strerror}") from None
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a crash: skip it, keep the rest
    if as_json:
        click.echo(json.dumps(entries, indent=2))
        return
    for entry in entries:
        status = "ok" if entry.get("ok") else entry.get("error_code") or "failed"
        click.echo(f"{entry.get('time')}  {entry.get('tool')}  {status}  {entry.get('seconds')} s")
