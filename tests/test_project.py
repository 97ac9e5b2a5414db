"""The project is found the way git finds its root: the nearest ancestor with ``.ikigai/``,
never the user's home or the filesystem root."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ikigai_core.app import App
from ikigai_core.project import find_project
from ikigai_core.trust import TrustStore, find_project_trust
from tests.support.replies import REPLIES
from tests.support.terminal import Terminal

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


@pytest.fixture
def tree(tmp_path):
    """``home/proj/sub/deeper`` with ``home/proj/.ikigai/``; ``home`` is the user's home."""
    home = tmp_path / "home"
    (home / "proj" / ".ikigai").mkdir(parents=True)
    (home / "proj" / "sub" / "deeper").mkdir(parents=True)
    return home


def find(start: Path, home: Path) -> Path | None:
    return find_project(start, ikigai_home=home / ".ikigai", user_home=home)


def test_the_nearest_ancestor_with_dot_ikigai_is_the_project(tree):
    project = tree / "proj"
    assert find(project, tree) == project
    assert find(project / "sub" / "deeper", tree) == project
    (project / "sub" / ".ikigai").mkdir()  # a project inside a project: the nearer wins
    assert find(project / "sub" / "deeper", tree) == project / "sub"


def test_a_file_named_dot_ikigai_is_not_a_project(tree):
    (tree / "proj" / "sub" / ".ikigai").write_text("")
    assert find(tree / "proj" / "sub", tree) == tree / "proj"


def test_agents_md_marks_a_project_as_dot_ikigai_does(tree):
    """Issue 22 item 15: the nearest marker wins, whichever it is; a directory named
    AGENTS.md is none, and one in the home directory is never reached."""
    sub = tree / "proj" / "sub"
    (sub / "AGENTS.md").write_text("Use tabs.\n")
    assert find(sub / "deeper", tree) == sub
    (sub / "AGENTS.md").unlink()
    (sub / "AGENTS.md").mkdir()
    assert find(sub / "deeper", tree) == tree / "proj"
    (tree / "AGENTS.md").write_text("")
    (tree / "other").mkdir()
    assert find(tree / "other", tree) is None


def test_the_search_stops_at_the_home_directory(tree):
    (tree / ".ikigai").mkdir()  # ~/.ikigai is the user layer, not a project
    (tree / "other").mkdir()
    assert find(tree / "other", tree) is None
    assert find(tree, tree) is None
    (tree.parent / ".ikigai").mkdir()  # above home: never reached
    assert find(tree / "other", tree) is None


def test_the_search_stops_at_the_root(tmp_path):
    (tmp_path / "a").mkdir()
    assert find_project(tmp_path / "a", ikigai_home=tmp_path / "h",
                        user_home=tmp_path / "elsewhere") is None


def test_the_ikigai_home_is_not_a_project(tree):
    ikigai_home = tree / "proj" / ".ikigai"
    assert find_project(tree / "proj" / "sub", ikigai_home=ikigai_home, user_home=tree) is None


def test_a_project_comes_with_the_reason_it_is_not_read_until_trusted(tmp_path):
    home, proj = tmp_path / "ikigai-home", tmp_path / "proj"
    (proj / ".ikigai").mkdir(parents=True)
    assert find_project_trust(tmp_path, home) is None
    assert find_project_trust(proj, home) == (
        proj, f"project directory not trusted; run `ikigai trust {proj}`")
    TrustStore(home).trust(proj)
    assert find_project_trust(proj, home) == (proj, None)


def test_app_exposes_the_project_found_once_for_its_cwd(tree):
    sub = tree / "proj" / "sub"
    app = App(environ={"IKIGAI_HOME": str(tree / ".ikigai")}, cwd=sub)
    assert app.project == tree / "proj"
    assert app.context.project == tree / "proj"  # what every call's plugins see
    (sub / ".ikigai").mkdir()  # made later (by a tool): the invocation's project stays
    assert app.project == tree / "proj"
    app.cwd = sub / "deeper"  # another directory: found again
    assert app.project == sub


# -- Through the CLI, from a subdirectory --------------------------------------------------


@pytest.fixture
def project(tmp_path, make_tool):
    """``proj`` with one project tool, and its subdirectory ``proj/sub``."""
    proj = tmp_path / "proj"
    make_tool(proj / ".ikigai" / "tools", "mine-tool")
    (proj / "sub").mkdir()
    return proj


def ikigai(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IKIGAI, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_a_subdirectory_uses_the_project_and_says_which(project):
    sub = project / "sub"
    before = ikigai("tool", "list", "--verbose", cwd=sub)
    assert before.stdout.splitlines()[0] == (
        f"Project: {project} (not trusted: its tools and AGENTS.md are not loaded)")
    assert f"run `ikigai trust {project}`" in before.stderr
    trusted = ikigai("trust", cwd=sub)  # the default is the project, not the subdirectory
    assert trusted.stdout == f"Trusted {project}: its .ikigai/tools will be loaded.\n"
    listed = json.loads(ikigai("tool", "list", "--json", cwd=sub).stdout)
    assert {"name": "mine", "path": str(project / ".ikigai" / "tools" / "mine-tool"),
            "source": "project", "description": "The mine test tool"} in listed
    verbose = ikigai("tool", "list", "--verbose", cwd=sub).stdout.splitlines()
    assert verbose[0] == f"Project: {project} (trusted)"
    assert ikigai("untrust", cwd=sub).stdout == f"No longer trusted: {project}\n"


def test_outside_every_project_there_is_none(tmp_path):
    listed = ikigai("tool", "list", "--verbose", cwd=tmp_path)
    assert listed.stdout.splitlines()[0].startswith("Project: none (no .ikigai/ nor AGENTS.md in this ")


def test_the_chat_banner_names_the_project(project):
    env = {**os.environ, "OPENAI_API_KEY": "sk-test-not-used-0123", "TERM": "dumb"}
    with Terminal([IKIGAI, "chat", "--provider", "openai"], env=env, cwd=project / "sub") as term:
        banner = term.read_until(b"> ")
        term.wait_for_input()
        term.write(b"\x04")
        term.read_until(b"")
        assert term.wait() == 0
    assert f"in project {project}; /help for commands".encode() in banner


# -- A project marked by AGENTS.md ---------------------------------------------------------


@pytest.fixture
def agents_project(tmp_path):
    """``proj`` with an ``AGENTS.md`` and no ``.ikigai/``, and its subdirectory ``proj/sub``."""
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "AGENTS.md").write_text("Answer in French.\n")
    return proj


def test_agents_md_marks_the_project_and_trust_sends_it(agents_project):
    """Issue 22 item 15: from a subdirectory, the folder holding AGENTS.md is the project;
    untrusted, its AGENTS.md is not sent and one line says how to send it."""
    sub = agents_project / "sub"
    listed = ikigai("tool", "list", "--verbose", cwd=sub).stdout.splitlines()
    assert listed[0] == f"Project: {agents_project} (not trusted: its tools and AGENTS.md are not loaded)"
    untrusted = ikigai("request", "--provider", "openai", "hi", cwd=sub)
    assert untrusted.stderr == (
        f"ikigai: AGENTS.md of {agents_project} not sent to the model: project directory "
        f"not trusted; run `ikigai trust {agents_project}`\n")
    assert "French" not in untrusted.stdout
    assert ikigai("trust", cwd=sub).stdout == (
        f"Trusted {agents_project}; it has no .ikigai/tools yet (tools put there will be "
        "loaded). Its AGENTS.md will be sent to the model.\n")
    trusted = ikigai("request", "--provider", "openai", "hi", cwd=sub)
    assert trusted.stderr == "" and "Answer in French." in trusted.stdout
    listed = ikigai("tool", "list", "--verbose", cwd=sub).stdout.splitlines()
    assert listed[0] == f"Project: {agents_project} (trusted)"


def test_ask_in_an_untrusted_agents_md_project_says_so_once(agents_project, fake_server):
    fake_server.push(REPLIES["openai"].reply("Hello."))
    env = {**os.environ, "OPENAI_BASE_URL": fake_server.url, "OPENAI_API_KEY": "sk-test-0123"}
    run = subprocess.run([IKIGAI, "ask", "--provider", "openai", "--no-stream", "hi"],
                         cwd=agents_project, env=env, capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout) == (0, "Hello.\n")
    assert run.stderr.count("\n") == 1 and "not sent to the model" in run.stderr
    assert "French" not in json.dumps(fake_server.requests[0].json)
