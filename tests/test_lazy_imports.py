"""`ikigai tool list` on a warm cache stays light: no httpx, no jsonschema (issue 2);
`ikigai --help` imports no command module, a warm `tool run` no provider (issue 14)."""

from __future__ import annotations

import fcntl
import importlib
import os
import pty
import struct
import subprocess
import sys
import termios
from importlib.metadata import entry_points

import pytest

from ikigai_core.cli import COMMANDS
from tests.support.imports import heavy_imports
from tests.support.terminal import read_until
from tests.support.tools import write_tool


@pytest.fixture
def tools_home(isolated_home):
    """``$IKIGAI_HOME`` with three user tools, so the schema cache has something to hold."""
    for name in ("alpha", "beta", "gamma"):
        write_tool(isolated_home / "tools", f"{name}-tool")
    return isolated_home


def test_warm_tool_list_imports_neither_httpx_nor_jsonschema(tools_home, tmp_path):
    # Every installed plugin loads (a provider importing httpx at import time fails
    # here) except the example, whose case is the next test.
    env = {**os.environ, "IKIGAI_DISABLE_PLUGINS": "example-tools"}
    cold = heavy_imports(["tool", "list"], env=env, cwd=str(tmp_path))
    assert "jsonschema" in cold  # the cold run validated the schemas it asked for
    warm = heavy_imports(["tool", "list"], env=env, cwd=str(tmp_path))
    assert warm == [], (f"a warm `ikigai tool list` imported {warm}; see who with "
                        "`python -X importtime -m ikigai_core.cli tool list`")


def test_warm_tool_list_stays_light_with_a_plugin_giving_schemas(tools_home, tmp_path):
    if "example-tools" not in entry_points(group="ikigai").names:
        pytest.skip("ikigai-example-tools is not installed")
    heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path))
    assert heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path)) == []


def test_warm_start_up_defines_no_dataclass_and_imports_no_json_nor_shutil(tools_home, tmp_path):
    """Every plugin installed, a warm `tool list` and `--help` import neither `json` (the
    caches are read by the C scanner) nor `dataclasses` (the records they build are
    `Record`s): 5 M and 4 M instructions (issue 14); nor `shutil` (7 M: `--help` measures
    the terminal itself, `cli.terminal_columns`)."""
    watched = ["json", "shutil", "dataclasses"]
    heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path))
    assert heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path),
                         watched=watched) == []
    assert heavy_imports(["--help"], env=os.environ, cwd=str(tmp_path),
                         watched=watched) == []


def test_without_mcp_json_the_mcp_plugin_imports_nothing(tools_home, tmp_path):
    if "mcp" not in entry_points(group="ikigai").names:
        pytest.skip("ikigai-mcp is not installed")
    heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path))
    assert heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path),
                         watched=["ikigai_mcp.config", "ikigai_mcp.servers"]) == []


def test_warm_tool_run_imports_no_provider(tools_home, tmp_path):
    """`ikigai tool run` talks to no model: once the provider key variables (kept from the
    tool) are cached, it imports no provider serializer (each imports ``providers``), nor
    the conversation types; and a call that no plugin judges and that carries no image
    defines neither ``CallDecision`` nor ``Attachment`` (issue 14)."""
    args = ["tool", "run", "bash", '{"command": "true"}']
    watched = ["ikigai_core.providers", "ikigai_core.conversation", "ikigai_core.wire",
               "ikigai_core.decision", "ikigai_core.attachments", "jsonschema", "httpx"]
    cold = heavy_imports(args, env=os.environ, cwd=str(tmp_path), watched=watched)
    assert "ikigai_core.providers" in cold  # the first run asked the providers
    warm = heavy_imports(args, env=os.environ, cwd=str(tmp_path), watched=watched)
    assert warm == [], (f"a warm `ikigai tool run` imported {warm}; see who with "
                        "`python -X importtime -m ikigai_core.cli tool run bash '{}'`")


def test_help_imports_no_command_module(isolated_home, tmp_path):
    script = ("import sys\nfrom ikigai_core.cli import main\ntry:\n    main(['--help'])\n"
              "except SystemExit:\n    pass\n"
              "print(sorted(m for m in sys.modules if m.startswith('ikigai_core.commands.')"
              " and m not in ('ikigai_core.commands.output', 'ikigai_core.commands.permissions')),"
              " file=sys.stderr)")
    # output: the CLI's printing; permissions: the approvals plugin's ikigai_commands answer
    # (a plugin's command is built to be listed; it imports nothing the plugin has not)
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert ran.stderr.strip() == "[]", ran.stderr
    assert "Commands:" in ran.stdout


def test_writing_the_snapshot_imports_neither_tempfile_nor_json(tools_home, tmp_path):
    """A warm `tool list` whose registry changed since the last one writes the snapshot
    (`refresh` says what changed since), making its temporary file itself and its text with
    the C encoder: `tempfile` with `shutil` and `random` was 10 M instructions, `json` 5 M
    (the start-up ledger)."""
    heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path))
    snapshot = tools_home / "cache" / "registry.json"
    snapshot.unlink()
    assert heavy_imports(["tool", "list"], env=os.environ, cwd=str(tmp_path),
                         watched=["tempfile", "shutil", "random", "json"]) == []
    assert snapshot.is_file() and snapshot.stat().st_mode & 0o777 == 0o600


def test_help_imports_none_of_what_the_default_plugins_hooks_use(isolated_home, tmp_path):
    """`ikigai --help` registers every plugin for the commands they add, but the default
    plugins import discovery, the trust store, the project lookup and the settings only
    when a hook of theirs runs (5 M instructions of `--help`, the start-up ledger)."""
    watched = ["ikigai_core.discovery", "ikigai_core.trust", "ikigai_core.project",
               "ikigai_core.config"]
    assert heavy_imports(["--help"], env=os.environ, cwd=str(tmp_path), watched=watched) == []


def test_the_commands_table_holds_each_commands_own_whole_summary():
    for name, (target, summary) in COMMANDS.items():
        module, attr = target.split(":")
        command = getattr(importlib.import_module(module), attr)
        assert summary == command.get_short_help_str(limit=1 << 16), name


def test_help_shows_whole_summaries(isolated_home, tmp_path):
    ran = subprocess.run([sys.executable, "-m", "ikigai_core.cli", "--help"], capture_output=True,
                         text=True, cwd=tmp_path, timeout=60, env={**os.environ, "COLUMNS": "80"})
    listing = " ".join(ran.stdout.split("Commands:")[1].split())
    assert "..." not in listing
    for _, summary in COMMANDS.values():
        assert summary in listing


@pytest.mark.parametrize("columns, widest", [(64, 62), (120, 78), (30, 50)])
def test_help_fits_the_terminal_it_is_shown_on(isolated_home, tmp_path, columns, widest):
    """Without $COLUMNS, help wraps to the terminal's width (click's rule: two columns
    short of it, at most 78 and at least 50)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {name: value for name, value in os.environ.items() if name != "COLUMNS"}
    try:
        with subprocess.Popen([sys.executable, "-m", "ikigai_core.cli", "--help"],
                              stdin=subprocess.DEVNULL, stdout=follower, stderr=follower,
                              cwd=tmp_path, env=env) as ran:
            os.close(follower)
            shown = read_until(leader, b"", timeout=60).decode().replace("\r\n", "\n")
            assert ran.wait(timeout=60) == 0, shown
    finally:
        os.close(leader)
    assert "Commands:" in shown
    assert max(map(len, shown.splitlines())) in range(widest - 8, widest + 1), shown


@pytest.mark.parametrize("columns", ["100", "0", "-3", "wide", None])
def test_help_measures_the_terminal_as_shutil_does(monkeypatch, columns):
    """`ikigai --help` asks the width as `shutil` would, without importing it."""
    import shutil

    from ikigai_core.cli import terminal_columns

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def test_batch_on_local_workers_never_imports_ray(isolated_home, tmp_path):
    """Ray is the `ray` extra's, imported by `ikigai batch --ray` only (issue 28): a local
    batch runs without it."""
    from tests.support.echo_model import EchoModel

    model = EchoModel()
    try:
        (tmp_path / "tasks.jsonl").write_text('{"id": "t", "prompt": "hi"}\n')
        env = {**os.environ, **model.environ}
        assert heavy_imports(["batch", "tasks.jsonl", "--workers", "1"], env=env,
                             cwd=str(tmp_path), watched=["ray"]) == []
        assert (tmp_path / "tasks.results.jsonl").read_text().count('"done"') == 1
    finally:
        model.close()
