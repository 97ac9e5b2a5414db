"""`ikigai tool new` and `ikigai tool test`, as a tool author uses them: the real command in
a subprocess, the generated tool run through the real executor, its own test run by pytest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.terminal import Terminal

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
TOOLCHAIN = {"python": None, "bash": "jq", "node": "node", "go": "go", "c": "cc"}
"""What each template needs besides ikigai (bash's JSON goes through jq)."""


def ikigai(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IKIGAI, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def needs(lang: str) -> None:
    program = TOOLCHAIN[lang]
    if program and shutil.which(program) is None:
        pytest.skip(f"the {lang} template needs {program}, which is not installed")


@pytest.fixture
def project(tmp_path):
    """A fresh project directory (no .ikigai/ yet: `tool new` makes it)."""
    root = tmp_path / "proj"
    root.mkdir()
    return root


@pytest.mark.parametrize("lang", list(TOOLCHAIN))
def test_a_new_tool_is_listed_at_once_and_passes_its_own_test(lang, isolated_home, tmp_path):
    needs(lang)
    started = time.monotonic()
    made = ikigai("tool", "new", "shout", "--lang", lang, "--user", cwd=tmp_path)
    took = time.monotonic() - started
    assert made.returncode == 0, made.stderr
    tools = isolated_home / "tools"
    assert f"Wrote {tools / 'shout-tool'}" in made.stdout
    if lang in ("python", "bash", "node"):
        assert took < 1.0, f"ikigai tool new --lang {lang} took {took:.2f} s"
    listed = ikigai("tool", "list", cwd=tmp_path)
    assert "shout" in listed.stdout.split()
    assert f"- `shout` ({lang}): shout TEXT back in capitals" in (tools / "README.md").read_text()
    tested = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(tools / "test_shout_tool.py")],
        cwd=tools, capture_output=True, text=True, timeout=120,
        env={**os.environ, "IKIGAI_HOME": str(isolated_home)})
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "3 passed" in tested.stdout


@pytest.mark.parametrize("lang", list(TOOLCHAIN))
def test_a_new_tool_refuses_bad_input_with_one_line(lang, isolated_home, tmp_path):
    needs(lang)
    assert ikigai("tool", "new", "shout", "--lang", lang, "--user", cwd=tmp_path).returncode == 0
    tool = str(isolated_home / "tools" / "shout-tool")
    for stdin, line in ((b'{"text": 5}', "shout: field 'text' must be a string"),
                        (b"", "shout: expected a JSON object on stdin, got nothing"),
                        (b'{"times": 2}', "shout: missing required field 'text'")):
        ran = subprocess.run([tool], input=stdin, capture_output=True, timeout=30)
        assert ran.returncode == 1
        assert ran.stderr.decode().startswith(line), ran.stderr
        assert ran.stderr.decode().count("\n") == 1
    assert subprocess.run([tool, "--bogus"], capture_output=True, timeout=30).returncode == 2


def test_a_new_project_tool_says_the_project_must_be_trusted(project):
    made = ikigai("tool", "new", "shout", "--lang", "python", cwd=project)
    assert made.returncode == 0, made.stderr
    assert (project / ".ikigai" / "tools" / "shout-tool").is_file()
    assert f"run `ikigai trust {project}` first" in made.stdout
    assert "shout" not in ikigai("tool", "list", cwd=project).stdout.split()
    assert ikigai("trust", cwd=project).returncode == 0
    assert "shout" in ikigai("tool", "list", cwd=project).stdout.split()
    again = ikigai("tool", "new", "other", "--lang", "bash", cwd=project)
    assert "is trusted: `ikigai tool list` shows the tool now" in again.stdout


@pytest.mark.parametrize("args, message", [
    (["bad-name", "--lang", "python"], "invalid tool name 'bad-name'"),
    (["9lives", "--lang", "python"], "invalid tool name '9lives'"),
    (["shout", "--lang", "rust"], "unknown language 'rust'; use one of python, bash, node, go, c"),
])
def test_bad_new_tool_requests_are_one_line_and_write_nothing(project, args, message):
    made = ikigai("tool", "new", *args, cwd=project)
    assert made.returncode == 2
    assert made.stderr.startswith(f"ikigai: {message}")
    assert made.stderr.count("\n") == 1
    assert not (project / ".ikigai").exists()


def test_an_existing_tool_is_replaced_only_with_force(project):
    assert ikigai("tool", "new", "shout", "--lang", "python", cwd=project).returncode == 0
    tool = project / ".ikigai" / "tools" / "shout-tool"
    tool.write_text("#!/bin/sh\n# mine\n")
    again = ikigai("tool", "new", "shout", "--lang", "bash", cwd=project)
    assert again.returncode == 2
    assert again.stderr == f"ikigai: {tool} exists; pass --force to replace it\n"
    assert tool.read_text() == "#!/bin/sh\n# mine\n"
    assert ikigai("tool", "new", "shout", "--lang", "bash", "--force",
                  cwd=project).returncode == 0
    assert "jq" in tool.read_text()
    assert (project / ".ikigai" / "tools" / "README.md").read_text().count("`shout`") == 1


def test_a_compiled_language_without_its_compiler_writes_nothing(project):
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # no go, no cc
    made = subprocess.run([IKIGAI, "tool", "new", "shout", "--lang", "c"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 1
    assert made.stderr == ("ikigai: --lang c needs cc on PATH to build shout-tool; install it "
                           "or choose another --lang\n")
    assert not (project / ".ikigai").exists()


def test_a_c_tool_that_does_not_build_leaves_nothing(project, monkeypatch):
    needs("c")
    from ikigai_core import scaffold
    from ikigai_core.errors import IkigaiError

    broken = project / "templates"
    shutil.copytree(scaffold.TEMPLATES, broken)
    (broken / "c.tool").write_text("this is not C\n")
    monkeypatch.setattr(scaffold, "TEMPLATES", broken)
    tools = project / ".ikigai" / "tools"
    with pytest.raises(IkigaiError, match=r"^building shout-tool failed: .*; nothing was written"):
        scaffold.new_tool(tools, "shout", "c")
    assert os.listdir(tools) == []


def test_tool_test_prints_the_envelope_and_the_time(isolated_home, tmp_path):
    assert ikigai("tool", "new", "shout", "--lang", "python", "--user", cwd=tmp_path).returncode == 0
    ran = ikigai("tool", "test", "shout", '{"text": "hi", "times": 2}', cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"tool_success": True, "result": {"output": "HI HI"}}
    assert ran.stderr.startswith("ikigai: shout: ok in ") and ran.stderr.endswith(" ms\n")
    failed = ikigai("tool", "test", "shout", '{"text": 5}', cwd=tmp_path)
    assert failed.returncode == 1
    assert json.loads(failed.stdout)["error_code"] == "INVALID_PARAMS"
    assert "shout: INVALID_PARAMS in " in failed.stderr
    bad = ikigai("tool", "test", "shout", "{nope", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.startswith("ikigai: ARGS_JSON is not valid JSON")
    missing = ikigai("tool", "test", "nope", cwd=tmp_path)
    assert (missing.returncode, missing.stderr) == (
        1, "ikigai: unknown tool 'nope'; see `ikigai tool list`\n")


def test_tool_test_watch_reruns_when_the_file_changes(isolated_home, tmp_path):
    assert ikigai("tool", "new", "shout", "--lang", "python", "--user", cwd=tmp_path).returncode == 0
    tool = isolated_home / "tools" / "shout-tool"
    with Terminal([IKIGAI, "tool", "test", "shout", '{"text": "hi"}', "--watch"],
                  cwd=tmp_path) as term:
        first = term.read_until(b"Ctrl-C stops\r\n", timeout=30)
        assert b'"output": "HI"' in first and b"ikigai: shout: ok in " in first
        tool.write_text(tool.read_text().replace("text.upper()", "text.upper() + '!'")
                        .replace("Shout TEXT", "Shout TEXT loudly"))
        second = term.read_until(b" ms\r\n", timeout=10)
        assert b'"output": "HI!"' in second
        term.write(b"\x03")
        assert term.wait(timeout=10) == 130
