"""`ikigai tool new` and `tool test` in-process (CliRunner), for the branches the subprocess
tests of tests/test_tool_authoring.py reach but coverage cannot see."""

from __future__ import annotations

import json
import subprocess

import click
import pytest
from click.testing import CliRunner

from ikigai_core import scaffold
from ikigai_core.cli import cli
from ikigai_core.commands import authoring
from ikigai_core.errors import IkigaiError, UsageError


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def shout(isolated_home, tmp_path, monkeypatch):
    """A user tool made by `tool new`, run from an empty directory."""
    monkeypatch.chdir(tmp_path)
    assert invoke("tool", "new", "shout", "--lang", "python", "--user").exit_code == 0
    return isolated_home / "tools" / "shout-tool"


def test_new_in_the_project_and_its_trust(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made = invoke("tool", "new", "shout", "--lang", "bash")
    assert made.exit_code == 0
    assert f"run `ikigai trust {tmp_path}` first" in made.stdout
    assert invoke("trust").exit_code == 0
    assert "is trusted" in invoke("tool", "new", "other", "--lang", "node").stdout


@pytest.mark.parametrize("name, lang, error", [
    ("a-b", "python", UsageError), ("ok", "cobol", UsageError)])
def test_new_refuses_without_writing(tmp_path, name, lang, error):
    with pytest.raises(error):
        scaffold.new_tool(tmp_path / "tools", name, lang)
    assert not (tmp_path / "tools").exists()


def test_a_build_that_hangs_is_stopped(tmp_path, monkeypatch):
    def hang(*args, **kwargs):
        raise subprocess.TimeoutExpired(args[0], scaffold.BUILD_TIMEOUT)

    monkeypatch.setattr(scaffold.shutil, "which", lambda program: f"/usr/bin/{program}")
    monkeypatch.setattr(scaffold.subprocess, "run", hang)
    with pytest.raises(IkigaiError, match="building shout-tool took over 120 s; nothing"):
        scaffold.new_tool(tmp_path, "shout", "go")
    assert [p.name for p in tmp_path.iterdir()] == []


def test_a_readme_the_author_wrote_is_kept(tmp_path):
    (tmp_path / "README.md").write_text("# My tools\n")
    scaffold.new_tool(tmp_path, "shout", "python")
    scaffold.new_tool(tmp_path, "shout", "python", force=True)
    text = (tmp_path / "README.md").read_text()
    assert text.startswith("# My tools\n- `shout` (python): ")
    assert text.count("`shout`") == 1


def test_test_prints_the_envelope(shout):
    ran = invoke("tool", "test", "shout", '{"text": "a"}')
    assert ran.exit_code == 0
    assert json.loads(ran.stdout)["result"] == {"output": "A"}
    assert invoke("tool", "test", "shout").exit_code == 1  # {} lacks text: INVALID_PARAMS
    assert invoke("tool", "test", "shout", "[").exit_code == 2
    assert invoke("tool", "test", "nope").exit_code == 1


def test_watch_reruns_on_each_change_until_interrupted(shout, monkeypatch, capsys):
    """Each sleep is one look at the file: change it, break it, remove it, stop."""
    steps = iter([
        lambda: shout.write_text(shout.read_text().replace("text.upper()", "text.lower()")),
        lambda: None,  # nothing changed: no run
        lambda: shout.write_text(shout.read_text() + "\nthis is not python (\n"),
        lambda: shout.rename(shout.with_name("gone")),
    ])

    def sleep(seconds):
        assert seconds == authoring.WATCH_INTERVAL
        step = next(steps, None)
        if step is None:
            raise KeyboardInterrupt
        step()

    monkeypatch.setattr(authoring.time, "sleep", sleep)
    monkeypatch.setattr("sys.argv", ["ikigai"])
    with pytest.raises(click.exceptions.Abort):  # how click passes Ctrl-C on
        cli.main(["tool", "test", "shout", '{"text": "Hi"}', "--watch"], standalone_mode=False)
    out, err = capsys.readouterr()
    assert [json.loads(part)["tool_success"] for part in out.replace("}\n{", "}\0{").split("\0")
            ] == [True, True]
    assert '"output": "HI"' in out and '"output": "hi"' in out
    assert "Ctrl-C stops" in err
    assert "tool 'shout' (user) was not loaded" in err


def test_watch_needs_a_file(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    from ikigai_core.tools import Tool

    registry = {"word": Tool("word", "", {"type": "object"}, ("true",), "plugin")}
    monkeypatch.setattr(authoring, "_call_once", lambda app, name, arguments: None)
    monkeypatch.setattr("ikigai_core.app.App.registry", lambda self, **kw: registry)
    ran = invoke("tool", "test", "word", "--watch")
    assert ran.exit_code == 1
    assert "tool 'word' has no file to watch" in ran.output


def test_a_file_in_the_way_or_a_missing_compiler_writes_nothing(tmp_path, monkeypatch):
    (tmp_path / "shout-tool.c").write_text("mine")
    with pytest.raises(UsageError, match=r"shout-tool.c exists; pass --force to replace it"):
        scaffold.new_tool(tmp_path, "shout", "c")
    monkeypatch.setattr(scaffold.shutil, "which", lambda program: None)
    with pytest.raises(IkigaiError, match="--lang c needs cc on PATH"):
        scaffold.new_tool(tmp_path, "shout", "c", force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["shout-tool.c"]


def test_a_c_tool_is_built_beside_its_source(tmp_path):
    if scaffold.shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) installed")
    made = scaffold.new_tool(tmp_path, "shout", "c")
    assert made.source == tmp_path / "shout-tool.c"
    assert subprocess.run([str(made.tool), "--schema"], capture_output=True,
                          timeout=30).stdout.startswith(b'{"name": "shout"')


def test_new_in_the_home_directory_is_the_user_layer(tmp_path, monkeypatch):
    """In ~ (no project), ~/.ikigai/tools is $IKIGAI_HOME/tools: no trust to ask for."""
    monkeypatch.setenv("IKIGAI_HOME", str(tmp_path / ".ikigai"))
    monkeypatch.chdir(tmp_path)
    made = invoke("tool", "new", "shout", "--lang", "python")
    assert made.exit_code == 0
    assert (tmp_path / ".ikigai" / "tools" / "shout-tool").is_file()
    assert "trust" not in made.stdout
