"""MCP (issue 11): a warm call vs the SDK's own ``session.call_tool``; a warm ``tool list``
with three servers vs ``python -c "import click, pluggy"``; a wrapper-script call (the old way).

Run on demand: ``python benchmarks/bench_mcp.py [CALLS]`` (needs ikigai-mcp installed).
Targets: a warm call adds at most 2 ms to the SDK's own call on the same server; a warm
``ikigai tool list`` starts no server and stays within 1.5x of importing click and pluggy.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _timing import instructions, measured, ms, report, run_command

from ikigai_core.app import App

ROOT = Path(__file__).resolve().parent.parent
EDGE = ROOT / "ikigai_sources" / "mcp" / "tests" / "servers" / "edge.py"
IKIGAI = str(Path(sys.executable).with_name("ikigai"))
WRAPPER = f"""#!{sys.executable}
# The old way (seed 002): one -tool wrapper per MCP tool, a fresh server for every call.
import anyio, json, sys
if sys.argv[1:] == ["--schema"]:
    print(json.dumps({{"name": "incr_wrapped", "description": "incr via a wrapper",
                      "parameters": {{"type": "object", "properties": {{}}}}}}))
    sys.exit()
from mcp import ClientSession, StdioServerParameters, stdio_client
async def main():
    params = StdioServerParameters(command={sys.executable!r}, args=[{str(EDGE)!r}])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("incr", json.load(sys.stdin))
    print(json.dumps(result.structured_content))
anyio.run(main)
"""


def sdk_call_times(calls: int) -> list[float]:
    """Per-call seconds of the SDK's own ``session.call_tool`` on an open session."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    async def main() -> list[float]:
        params = StdioServerParameters(command=sys.executable, args=[str(EDGE)])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for _ in range(20):
                    await session.call_tool("incr", {})
                times = []
                for _ in range(calls):
                    start = time.perf_counter()
                    await session.call_tool("incr", {})
                    times.append(time.perf_counter() - start)
                return times

    return asyncio.run(main())


def ikigai_call_times(app: App, calls: int) -> list[float]:
    """Per-call seconds of ``executor.call`` of the same tool on ikigai's warm session."""
    registry = app.registry()
    for _ in range(20):
        app.executor.call(registry, "edge__incr", {})
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        envelope = app.executor.call(registry, "edge__incr", {}).envelope
        times.append(time.perf_counter() - start)
        assert envelope["tool_success"], envelope
    return times


def main(calls: int = 300) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        (home / "tools").mkdir(parents=True)
        pids = Path(tmp) / "pids"
        entry = {"command": sys.executable, "args": [str(EDGE)], "env": {"EDGE_PIDS": str(pids)}}
        (home / "mcp.json").write_text(json.dumps({"mcpServers": {
            name: entry for name in ("edge", "two", "three")}}))
        env = {**os.environ, "IKIGAI_HOME": str(home)}
        app = App(environ=env, cwd=Path(tmp))

        # 1. A warm call: the SDK's own call vs ikigai's, blocks taking turns.
        sdk: list[float] = []
        ours: list[float] = []
        for _ in range(5):
            sdk += sdk_call_times(calls // 5)
            ours += ikigai_call_times(app, calls // 5)
        sdk_median, ours_median = statistics.median(sdk), statistics.median(ours)
        extra = ours_median - sdk_median
        print(f"warm call, {len(ours)} calls each, median: SDK session.call_tool "
              f"{sdk_median * 1000:.3f} ms, ikigai executor.call {ours_median * 1000:.3f} ms "
              f"-> +{extra * 1000:.3f} ms (target <= 2 ms, {'ok' if extra <= 0.002 else 'OVER'})",
              flush=True)

        # 2. The old way: a -tool wrapper that starts the server for each call.
        wrapper = home / "tools" / "incr-wrapped-tool"
        wrapper.write_text(WRAPPER)
        wrapper.chmod(0o755)
        wrapped_app = App(environ=env, cwd=Path(tmp))
        registry = wrapped_app.registry()
        times = []
        for _ in range(5):
            start = time.perf_counter()
            envelope = wrapped_app.executor.call(registry, "incr_wrapped", {}).envelope
            times.append(time.perf_counter() - start)
            assert envelope["tool_success"], envelope
        print(f"wrapper-script call (spawn, initialise, call, shut down), 5 calls, median: "
              f"{ms(statistics.median(times))} vs warm session {ours_median * 1000:.3f} ms",
              flush=True)

        # 3. A warm `ikigai tool list` with three servers: no server starts.
        wrapper.unlink()
        run_command([IKIGAI, "refresh"], env=env, cwd=tmp)
        started = pids.read_text().split()
        medians = measured({
            "ikigai tool list": lambda: run_command([IKIGAI, "tool", "list"], env=env, cwd=tmp),
            "import click, pluggy": lambda: run_command(
                [sys.executable, "-c", "import click, pluggy"], env=env, cwd=tmp),
        }, 20)
        assert pids.read_text().split() == started, "a warm tool list started a server"
        report("warm `ikigai tool list`, 3 MCP servers configured, none started", medians, 1.5)
        base = instructions([sys.executable, "-c", "import click, pluggy"], env, tmp)
        if base:
            count = instructions([IKIGAI, "tool", "list"], env, tmp) or 0
            print(f"  instructions (callgrind; the same on a busy machine): {count / 1e6:.1f} M "
                  f"vs {base / 1e6:.1f} M -> {count / base:.2f}x (target <= 1.5x)", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
