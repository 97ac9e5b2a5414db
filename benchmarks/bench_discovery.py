"""Discovery and start-up: cold vs warm discovery of 50 tools, `ikigai tool list` start-up
against ``python -c "import click, pluggy"``, and which heavy packages it imports.

Run: ``python benchmarks/bench_discovery.py`` (or ``python benchmarks/run.py discovery``);
``IKIGAI_BENCH_ROUNDS`` (default 10) sets the rounds.
Targets (issues 2 and 14): warm `ikigai tool list` and `ikigai --help` within 1.3x of the
import; no httpx or jsonschema imported by a warm `tool list`; (d) with eight CPU-bound
processes running, every `ikigai refresh` finds every tool.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from importlib.metadata import entry_points
from pathlib import Path

from _timing import instructions, interleaved, ms, run_command, timed

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from tests.support.imports import HEAVY, heavy_imports  # noqa: E402
from tests.support.tools import write_tool  # noqa: E402

TOOLS = 50
ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "10"))
STARTUP_TARGET = 1.3
HOGS = 8
REFRESHES = 6
IKIGAI = str(Path(sys.executable).parent / "ikigai")
BASELINE = (sys.executable, "-c", "import click, pluggy")
BASELINE_LABEL = "python -c 'import click, pluggy'"
_CALL_MAIN = "import sys; from ikigai_core.cli import main; main(sys.argv[1:])"


def make_home(base: Path) -> Path:
    """A fresh ``$IKIGAI_HOME`` whose ``tools`` holds ``TOOLS`` small Python tools."""
    home = base / "home"
    for i in range(TOOLS):
        write_tool(home / "tools", f"bench{i:02d}-tool")
    return home


def clear_cache(home: Path) -> None:
    """Forget every schema: the next discovery is cold."""
    shutil.rmtree(home / "cache", ignore_errors=True)


def cold_and_warm(run, home: Path) -> tuple[float, float]:
    """Median seconds of ``run()`` on an empty schema cache, then right after on a warm one."""
    cold, warm = [], []
    for _ in range(ROUNDS):
        clear_cache(home)
        cold.append(timed(run))
        warm.append(timed(run))
    return statistics.median(cold), statistics.median(warm)


def bench_discovery(home: Path, env: dict[str, str], cwd: Path) -> None:
    """(a) cold vs warm discovery, in-process and as the `ikigai tool list` command."""
    from ikigai_core.config import load_settings
    from ikigai_core.discovery import discover
    from ikigai_core.plugins import get_plugin_manager

    pm = get_plugin_manager(environ=env)
    settings = load_settings(home, env)
    registry = discover(pm, home=home, cwd=cwd, settings=settings, refresh=True)
    print(f"(a) discovery of {TOOLS} tools ({len(registry)} in the registry), "
          f"median of {ROUNDS} rounds")
    cold, warm = cold_and_warm(
        lambda: discover(pm, home=home, cwd=cwd, settings=settings), home)
    print(f"    in-process discover():  cold {ms(cold):>10}  warm {ms(warm):>10}  "
          f"cold/warm {cold / warm:.0f}x")
    cold, warm = cold_and_warm(lambda: run_command([IKIGAI, "tool", "list"], env, cwd), home)
    print(f"    `ikigai tool list`:     cold {ms(cold):>10}  warm {ms(warm):>10}  "
          f"cold/warm {cold / warm:.1f}x")


def bench_startup(env: dict[str, str], cwd: Path) -> bool:
    """(b) warm `ikigai tool list` against the bare import of its two dependencies."""
    builtins_only = {**env, "IKIGAI_DISABLE_PLUGINS": ",".join(entry_points(group="ikigai").names)}
    for warm_up in (env, builtins_only):
        run_command([IKIGAI, "tool", "list"], warm_up, cwd)
    listing = "ikigai tool list (warm, all plugins)"
    listing_builtins = "ikigai tool list (warm, built-ins only)"
    helping = "ikigai --help"
    medians = interleaved({
        "python -c pass": lambda: run_command([sys.executable, "-c", "pass"], env, cwd),
        BASELINE_LABEL: lambda: run_command(BASELINE, env, cwd),
        "python -c 'import ikigai_core.cli'": lambda: run_command(
            [sys.executable, "-c", "import ikigai_core.cli"], env, cwd),
        listing: lambda: run_command([IKIGAI, "tool", "list"], env, cwd),
        listing_builtins: lambda: run_command([IKIGAI, "tool", "list"], builtins_only, cwd),
        helping: lambda: run_command([IKIGAI, "--help"], env, cwd),
    }, rounds=2 * ROUNDS)
    print(f"(b) start-up, interleaved, median of {2 * ROUNDS} rounds "
          f"(target: within {STARTUP_TARGET}x of the baseline)")
    ok = True
    for name, seconds in medians.items():
        ratio = seconds / medians[BASELINE_LABEL]
        verdict = ""
        if name in (listing, listing_builtins, helping):
            verdict = "PASS" if ratio <= STARTUP_TARGET else "FAIL"
            ok = ok and ratio <= STARTUP_TARGET
        print(f"    {name:<40} {ms(seconds):>10}  {ratio:5.2f}x  {verdict}")
    base = instructions(BASELINE, env, str(cwd))
    if base:
        print("    instructions executed (callgrind; the same on a busy machine):")
        for name, argv, case_env in ((listing, [IKIGAI, "tool", "list"], env),
                                     (listing_builtins, [IKIGAI, "tool", "list"], builtins_only),
                                     (helping, [IKIGAI, "--help"], env)):
            count = instructions(argv, case_env, str(cwd)) or 0
            print(f"    {name:<40} {count / 1e6:8.1f} M  {count / base:5.2f}x")
    return ok


def importtime(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, tuple[int, int]]:
    """``{module: (self us, cumulative us)}`` from ``python -X importtime ARGV``."""
    ran = subprocess.run([sys.executable, "-X", "importtime", *argv], env=env, cwd=cwd,
                         capture_output=True, text=True, check=True)
    return {name: (int(self_us), int(cum_us)) for self_us, cum_us, name in
            re.findall(r"import time:\s+(\d+) \|\s+(\d+) \|\s+(\S+)", ran.stderr)}


def import_profile(env: dict[str, str], cwd: Path, top: int = 12) -> None:
    """What a warm `ikigai tool list` imports beyond click and pluggy, and what it costs."""
    baseline = importtime(list(BASELINE[1:]), env, cwd)
    listing = importtime(["-c", _CALL_MAIN, "tool", "list"], env, cwd)
    extra = {name: times for name, times in listing.items() if name not in baseline}
    by_package: dict[str, int] = {}
    for name, (self_us, _) in extra.items():
        by_package[name.split(".")[0]] = by_package.get(name.split(".")[0], 0) + self_us
    total = sum(self_us for self_us, _ in extra.values())
    print(f"    why: one warm run imports {len(extra)} modules beyond the baseline's, "
          f"{total / 1000:.1f} ms (python -X importtime); self time by package:")
    for package, us in sorted(by_package.items(), key=lambda kv: -kv[1])[:top]:
        print(f"      {package:<36} {us / 1000:6.1f} ms")
    print("    slowest of those modules, cumulative (includes what each imports):")
    for name, (_, cum_us) in sorted(extra.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"      {name:<36} {cum_us / 1000:6.1f} ms")


def check_heavy_imports(env: dict[str, str], cwd: Path) -> bool:
    """(c) which of httpx/jsonschema a warm `ikigai tool list` imports, and which plugin
    brings them in."""
    print(f"(c) packages imported by a warm `ikigai tool list` (must be none of {HEAVY})")
    plugins = sorted(entry_points(group="ikigai").names)
    configs = {"all installed plugins": ""}
    configs["built-in plugins only"] = ",".join(plugins)
    for name in plugins:
        configs[f"built-ins + {name}"] = ",".join(p for p in plugins if p != name)
    found = {}
    for label, disabled in configs.items():
        config_env = {**env, "IKIGAI_DISABLE_PLUGINS": disabled}
        heavy_imports(["tool", "list"], env=config_env, cwd=str(cwd))  # warm the cache
        found[label] = heavy_imports(["tool", "list"], env=config_env, cwd=str(cwd))
        print(f"    {label:<34} {'FAIL: ' + ', '.join(found[label]) if found[label] else 'PASS'}")
    return not found["all installed plugins"]


def bench_refresh_under_load(env: dict[str, str], cwd: Path) -> bool:
    """(d) `ikigai refresh` while eight CPU-bound processes run: every tool, every time."""
    expected = _refreshed(env, cwd)
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS)]
    try:
        counts, seconds = [], []
        for _ in range(REFRESHES):
            seconds.append(timed(lambda: counts.append(_refreshed(env, cwd))))
        warm = timed(lambda: run_command([IKIGAI, "tool", "list"], env, cwd))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    ok = all(count == expected for count in counts)
    print(f"(d) `ikigai refresh` x{REFRESHES} beside {HOGS} CPU-bound processes: found "
          f"{', '.join(map(str, counts))} of {expected} tools "
          f"({'PASS' if ok else 'FAIL'}); median {ms(statistics.median(seconds))} a refresh; "
          f"a warm `tool list` right after: {ms(warm)}")
    return ok


def _refreshed(env: dict[str, str], cwd: Path) -> int:
    """How many tools `ikigai refresh` says are available."""
    ran = subprocess.run([IKIGAI, "refresh"], env=env, cwd=cwd, capture_output=True, text=True)
    found = re.search(r"(\d+) tools available", ran.stdout)
    return int(found[1]) if found else -1


def main() -> None:
    """Run (a) to (d) in a temporary home; profile imports if start-up misses its target."""
    with tempfile.TemporaryDirectory(prefix="ikigai-bench-") as tmp:
        base = Path(tmp)
        home = make_home(base)
        cwd = base / "work"
        cwd.mkdir()
        # Bytecode on, as for users: PYTHONDONTWRITEBYTECODE, which tox sets, would make
        # every run recompile ikigai's editable sources while click and pluggy load from .pyc.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("IKIGAI_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["IKIGAI_HOME"] = str(home)
        bench_discovery(home, env, cwd)
        startup_ok = bench_startup(env, cwd)
        if not startup_ok:
            import_profile(env, cwd)
        imports_ok = check_heavy_imports(env, cwd)
        load_ok = bench_refresh_under_load(env, cwd)
    missed = [name for name, ok in (("start-up", startup_ok), ("lazy imports", imports_ok),
                                    ("refresh under load", load_ok)) if not ok]
    print(f"targets missed: {', '.join(missed)}" if missed else "all targets met")


if __name__ == "__main__":
    main()
