"""The reference server ``@modelcontextprotocol/server-everything`` (node), started through
``npx`` (npx -> sh -> node: a server with children), when node and the npm registry are
here. Installed once into a cache directory that outlives the run."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.procs import wait_gone

PACKAGE = "@modelcontextprotocol/server-everything"
IKIGAI = str(Path(sys.executable).with_name("ikigai"))
pytestmark = pytest.mark.slow  # node starts in about 1 s, and npm may download


@pytest.fixture(scope="module")
def prefix() -> Path:
    """The npm prefix holding the server, installed there on first use."""
    if shutil.which("node") is None or shutil.which("npx") is None:
        pytest.skip("node and npx are not installed")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    where = cache / "ikigai-tests" / "server-everything"
    if not (where / "node_modules" / ".bin" / "mcp-server-everything").exists():
        try:
            done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                                   str(where), PACKAGE], capture_output=True, text=True,
                                  timeout=300, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install took over 300 s (is the npm registry reachable?)")
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            pytest.skip(f"cannot install {PACKAGE} from the npm registry: {last}")
    return where


def ikigai(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120, stdin=subprocess.DEVNULL)


def running_from(prefix: Path) -> list[int]:
    """Every process whose command line names ``prefix`` (npx, sh, node)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if str(prefix).encode() in cmdline and int(pid) != os.getpid():
            found.append(int(pid))
    return found


def test_server_everything_through_tool_list_and_tool_run(servers, prefix, tmp_path):
    servers({"everything": {"command": "npx", "args": ["--prefix", str(prefix), "--no",
                                                       "mcp-server-everything", "stdio"],
                            "startupTimeout": 60}})
    listed = ikigai(tmp_path, "tool", "list")
    names = set(listed.stdout.split())
    assert {"everything__echo", "everything__get-sum", "everything__get-tiny-image"} <= names, (
        listed.stderr)

    def run(name: str, arguments: dict) -> dict:
        ran = ikigai(tmp_path, "tool", "run", name, json.dumps(arguments))
        return json.loads(ran.stdout)

    assert run("everything__echo", {"message": "hi"}) == {
        "tool_success": True, "result": {"text": "Echo: hi"}}
    summed = run("everything__get-sum", {"a": 2, "b": 3})
    assert summed["tool_success"] and "5" in json.dumps(summed["result"])
    image = run("everything__get-tiny-image", {})
    text = json.dumps(image)
    assert image["tool_success"] and "image/png" in text
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()[:8]
    assert png not in text  # never base64 in the model's context
    invalid = run("everything__get-sum", {"a": "two"})
    assert invalid["error_code"] == "INVALID_PARAMS"
    deadline = time.monotonic() + 10
    while left := running_from(prefix):  # npx, sh and node all ended with ikigai
        assert time.monotonic() < deadline, f"left behind: {left}"
        time.sleep(0.05)
    assert all(wait_gone(pid) for pid in left)
