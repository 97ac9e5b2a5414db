"""The ``shell`` setting (config key or ``IKIGAI_SHELL``): the bash tool runs commands in
bash, zsh, fish or PowerShell, and the default system prompt says which (issue 27). Each
shell the system packages give is tested through the real ``ikigai`` program."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
PROBES = {"bash": ("echo $BASH_VERSION", "."), "zsh": ("echo $ZSH_VERSION", "."),
          "fish": ("echo $FISH_VERSION", "."),
          "pwsh": ("$PSVersionTable.PSVersion.Major", "")}
"""A command that prints the shell's version (no other shell prints it), and a character
the version holds."""


def ikigai(*args: str, env: dict[str, str] | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` as a real program."""
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})}, cwd=cwd, stdin=subprocess.DEVNULL)


def run_bash(command: str, **kwargs: object) -> dict[str, object]:
    """The bash tool's result for ``command``, through ``ikigai tool run``."""
    done = ikigai("tool", "run", "bash", json.dumps({"command": command}), **kwargs)
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)
    assert envelope["tool_success"], envelope
    return envelope["result"]


def need(shell: str) -> None:
    if shutil.which(shell) is None:
        reason = ("pwsh is not in Debian's packages" if shell == "pwsh"
                  else f"{shell} is not installed (.ci/run installs it)")
        pytest.skip(reason)


@pytest.mark.parametrize("shell", list(PROBES))
def test_the_shell_setting_runs_the_command_in_that_shell(shell):
    need(shell)
    probe, mark = PROBES[shell]
    result = run_bash(probe, env={"IKIGAI_SHELL": shell})
    assert result["exit_code"] == 0 and mark in str(result["output"]) and result["output"]
    assert run_bash(probe) == {"output": "", "exit_code": 0}  # /bin/sh by default


def test_the_config_key_reaches_the_tool_even_when_tool_env_inherits_nothing(isolated_home):
    need("fish")
    (isolated_home / "config.json").write_text(json.dumps(
        {"shell": "fish", "tool_env": {"inherit": "none", "include": ["PATH"]}}))
    result = run_bash("set n 6; math $n '*' 7")
    assert result == {"output": "42", "exit_code": 0}


def test_a_missing_shell_is_one_line(tmp_path):
    result = run_bash("true", env={"IKIGAI_SHELL": "zsh", "PATH": str(tmp_path)})
    assert result == {"exit_code": 127, "output": "zsh: cannot run zsh: No such file or "
                      "directory; install it, or set shell (IKIGAI_SHELL) to another"}


def test_an_unknown_shell_is_refused_before_anything_runs():
    done = ikigai("tool", "run", "bash", '{"command": "true"}', env={"IKIGAI_SHELL": "tcsh"})
    assert done.returncode != 0 and done.stdout == ""
    assert done.stderr == ("ikigai: environment variable IKIGAI_SHELL: 'shell' must be one of "
                           "sh, bash, zsh, fish, pwsh, got 'tcsh'; fix or remove it\n")


def system_prompt(env: dict[str, str]) -> str:
    done = ikigai("request", "--provider", "openai", "hi", env=env)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["instructions"])  # the Responses wire's system prompt


def test_the_default_prompt_speaks_of_the_chosen_shell():
    """The setting reaches the prompt through a real process once; each shell's section
    in-process (the same ``default_prompt``)."""
    from ikigai_core.defaults.system_prompt import default_prompt

    sent = system_prompt({"IKIGAI_SHELL": "fish"})
    for shell, prompt in [("fish", sent), *((shell, default_prompt(Path("/p"), shell=shell))
                                           for shell in ("zsh", "fish", "pwsh"))]:
        assert f"## Working with {shell}\nThe bash tool runs your commands in " in prompt
        assert "## Working with bash" not in prompt


def test_the_default_prompt_is_unchanged_without_the_setting():
    assert "## Working with bash\n- Look before" in system_prompt({})


def test_in_process_the_executor_hands_the_setting_to_the_tool():
    from click.testing import CliRunner

    from ikigai_core.cli import cli

    need("fish")
    done = CliRunner().invoke(cli, ["tool", "run", "bash", '{"command": "echo $FISH_VERSION"}'],
                              env={"IKIGAI_SHELL": "fish"}, catch_exceptions=False)
    assert done.exit_code == 0 and json.loads(done.stdout)["result"]["output"]


def test_default_prompt_guidance_in_process():
    from ikigai_core.defaults.system_prompt import default_prompt

    plain = default_prompt(Path("/p"))
    assert default_prompt(Path("/p"), shell="bash") == plain == default_prompt(Path("/p"),
                                                                                 shell="sh")
    fish = default_prompt(Path("/p"), shell="fish")
    assert fish.replace("## Working with fish\n", "## Working with bash\n", 1) != plain
    assert "`set NAME value`" in fish and "`set NAME value`" not in plain
