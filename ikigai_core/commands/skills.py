"""``ikigai skill list|show``: the skills every layer gives, and one skill's instructions."""

from __future__ import annotations

from typing import Any

import click

from ikigai_core.app import App
from ikigai_core.commands.output import echo_json, printable, warn
from ikigai_core.commands.tools import pass_app, report_skipped
from ikigai_core.errors import IkigaiError
from ikigai_core.skills import Skill


def skill_json(skill: Skill) -> dict[str, Any]:
    """One skill as ``skill list --json`` prints it."""
    return {"name": skill.name, "description": skill.description, "source": skill.source,
            "path": str(skill.path), "tools": list(skill.tools),
            "tools_dir": None if skill.tools_dir is None else str(skill.tools_dir)}


@click.group("skill")
def skill_group() -> None:
    """List and show the skills the model can load."""


@skill_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array on stdout.")
@click.option("-v", "--verbose", is_flag=True, help="Also show overridden skills.")
@pass_app
def list_skills(app: App, as_json: bool, verbose: bool) -> None:
    """List every skill; skipped skills and why go to stderr."""
    skills = app.skills
    report_skipped(skills, verbose=verbose, what="skill")
    if as_json:
        echo_json([skill_json(skill) for skill in skills.values()])
        return
    if not skills:
        warn(f"no skills found; put them in {app.home / 'skills'}")
    for line in skill_lines(skills.values()):
        click.echo(line)


def skill_lines(skills: Any) -> list[str]:
    """``name  source  description`` for each skill, aligned (``skill list``, ``/skill``)."""
    skills = list(skills)
    width = max((len(skill.name) for skill in skills), default=0)
    return [printable(f"{skill.name:<{width}}  {skill.source:<8}  {skill.description}")
            for skill in skills]


@skill_group.command("show")
@click.argument("name")
@pass_app
def show_skill(app: App, name: str) -> None:
    """Show one skill: where it is, the tools it brings, and its instructions."""
    skill = app.skills.get(name)
    if skill is None:
        why = next((s.reason for s in app.skills.skipped
                    if s.name == name and s.kind != "ignored"), None)
        raise IkigaiError(f"skill '{name}' was not loaded: {why}" if why else
                          f"unknown skill '{name}'; see `ikigai skill list`")
    tools = ", ".join(skill.tools) or "none named"
    click.echo(printable(f"Skill: {skill.name}\nSource: {skill.source}\nPath: {skill.path}\n"
                         f"Description: {skill.description}\nTools: {tools}"
                         + (f" (and {skill.tools_dir})" if skill.tools_dir else "")))
    click.echo()
    click.echo(printable(skill.body, prose=True))  # words and emoji keep their joiners
