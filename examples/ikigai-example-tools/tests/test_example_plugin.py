"""The example distribution, installed, is a plugin like any other: loaded, listed, run, wrapped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from ikigai_example_tools import word_count

from ikigai_core import hookimpl
from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.plugins import get_plugin_manager

IKIGAI = Path(sys.executable).parent / "ikigai"
PLUGIN = "example-tools"


def run_ikigai(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed ``ikigai`` console script, as a user runs it."""
    return subprocess.run([str(IKIGAI), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})


def listed(stdout: str) -> dict[str, dict]:
    return {entry["name"]: entry for entry in json.loads(stdout)}


def test_entry_point_plugin_is_loaded():
    pm = get_plugin_manager()
    plugin = pm.get_plugin(PLUGIN)
    assert plugin is not None and plugin.__name__ == "ikigai_example_tools"
    assert PLUGIN in [impl.plugin_name for impl in pm.hook.ikigai_tool_sources.get_hookimpls()]


def test_tool_is_listed_through_the_cli_runner():
    result = CliRunner().invoke(cli, ["tool", "list", "--json"])
    assert result.exit_code == 0, result.output
    tool = listed(result.stdout)["word_count"]
    assert tool["source"] == "example"
    assert tool["description"] == word_count.SCHEMA["description"]
    assert tool["path"] == f"{sys.executable} -m ikigai_example_tools.word_count"


def test_tool_is_listed_by_the_installed_command():
    ran = run_ikigai("tool", "list", "--json")
    assert ran.returncode == 0, ran.stderr
    assert listed(ran.stdout)["word_count"]["source"] == "example"


def test_tool_runs_and_is_wrapped_in_the_envelope():
    ran = run_ikigai("tool", "run", "word_count", '{"text": "a b c"}')
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {
        "tool_success": True,
        "result": {"words": 3, "lines": 1, "characters": 5},
    }


def test_arguments_are_validated_against_the_given_schema():
    result = CliRunner().invoke(cli, ["tool", "run", "word_count", '{"txt": "a"}'])
    assert result.exit_code == 1
    envelope = json.loads(result.stdout)
    assert envelope["error_code"] == "INVALID_PARAMS"
    assert "text" in envelope["error"]


def test_an_envelope_plugin_wraps_its_result_too():
    class FlatEnvelope:
        @hookimpl
        def ikigai_wrap_result(self, outcome):
            return {"ok": outcome.success, "tool": outcome.tool, "data": outcome.result}

    app = App()
    app.pm.register(FlatEnvelope(), name="flat-envelope")
    envelope = app.executor.call(app.registry(), "word_count", {"text": "one two"}).envelope
    assert envelope == {"ok": True, "tool": "word_count",
                        "data": {"words": 2, "lines": 1, "characters": 7}}


def test_plugins_lists_it_with_distribution_and_version():
    ran = run_ikigai("plugins", "--json")
    assert ran.returncode == 0, ran.stderr
    plugin = listed(ran.stdout)[PLUGIN]
    assert plugin == {"name": PLUGIN, "distribution": "ikigai-example-tools", "version": "0.1.0",
                      "hooks": ["ikigai_tool_sources"], "builtin": False}


def test_blocking_it_removes_its_tool():
    ran = run_ikigai("tool", "list", "--json", IKIGAI_DISABLE_PLUGINS=PLUGIN)
    assert ran.returncode == 0, ran.stderr
    assert "word_count" not in listed(ran.stdout)
    ran = run_ikigai("tool", "run", "word_count", '{"text": "a"}', IKIGAI_DISABLE_PLUGINS=PLUGIN)
    assert ran.returncode == 1
    assert json.loads(ran.stdout)["error_code"] == "TOOL_NOT_FOUND"
    ran = run_ikigai("plugins", "--json", IKIGAI_DISABLE_PLUGINS=PLUGIN)
    assert PLUGIN not in listed(ran.stdout)


@pytest.mark.parametrize("args, expected", [
    (["--schema"], word_count.SCHEMA),
    ([], {"words": 2, "lines": 2, "characters": 8}),
])
def test_the_tool_module_speaks_the_tool_protocol(args, expected):
    ran = subprocess.run([sys.executable, "-m", "ikigai_example_tools.word_count", *args],
                         input='{"text": "hi\\nthere"}', capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == expected
