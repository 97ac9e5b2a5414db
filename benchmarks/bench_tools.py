"""The built-in tools against their baselines, measured side by side in one run.

Run on demand: ``python benchmarks/bench_tools.py [ROUNDS]``. Prints the medians of interleaved
runs (wall clock and CPU time) and the ratios for each pair. Targets: bash-tool within 1.25x of
a minimal stdlib script, grep-tool within 3x of ``grep -rnE`` over ~40 MB of sources, glob-tool
within 2x of ``find -name`` over 100,000 files. The trees are generated in a temporary directory.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import interleaved, measured, ms, report

BIN = Path(sys.executable).parent
BASELINE_BASH = """\
import json, subprocess, sys
args = json.load(sys.stdin)
proc = subprocess.run(["/bin/sh", "-c", args["command"]], stdin=subprocess.DEVNULL,
                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
out = proc.stdout.decode("utf-8", "replace")
sys.stdout.write(json.dumps({"output": out[:-1] if out.endswith("\\n") else out,
                             "exit_code": proc.returncode}))
"""
GREP_PATTERN = "TODO: [a-z]+ [0-9]+"
WORDS = "int char return value index buffer length result count error state node list".split()


def tool(name: str, args: dict, cwd: Path | None = None) -> bytes:
    """Run an installed tool and return its stdout; a failure stops the benchmark."""
    ran = subprocess.run([str(BIN / f"{name}-tool")], input=json.dumps(args).encode(),
                         capture_output=True, cwd=cwd)
    if ran.returncode != 0:
        raise SystemExit(f"benchmark stopped: {name}-tool exited {ran.returncode}: {ran.stderr!r}")
    return ran.stdout


def command(argv: list[str], cwd: Path | None = None, stdin: bytes = b"") -> bytes:
    """Run a baseline command and return its stdout."""
    return subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd).stdout


def source_tree(root: Path, megabytes: int) -> int:
    """Write ~``megabytes`` MB of C-like sources under ``root``; returns the TODO line count."""
    rng = random.Random(1)
    todos = written = 0
    for n in range(megabytes * 100):
        lines = []
        for _ in range(250):
            if rng.random() < 0.002:
                todos += 1
                lines.append(f"    /* TODO: fix {rng.randrange(1000)} */")
            else:
                words = " ".join(rng.choice(WORDS) for _ in range(5))
                lines.append(f"    {words} = {rng.randrange(10**6)};")
        path = root / f"mod{n % 40:02d}" / f"sub{n % 7}" / f"file{n:05d}.c"
        path.parent.mkdir(parents=True, exist_ok=True)
        data = "\n".join(lines) + "\n"
        path.write_text(data)
        written += len(data)
    return todos


def file_tree(root: Path, files: int) -> None:
    """Write ``files`` empty files, 100 per directory, a third of them ``*.c``."""
    for n in range(files):
        directory = root / f"d{n // 10000:02d}" / f"e{n // 100 % 100:02d}"
        if n % 100 == 0:
            directory.mkdir(parents=True)
        (directory / f"f{n:06d}.{('c', 'h', 'txt')[n % 3]}").touch()


def bench_bash(rounds: int, tmp: Path) -> None:
    """One ``{"command": "true"}`` round trip vs a minimal stdlib script."""
    script = tmp / "baseline_bash.py"
    script.write_text(BASELINE_BASH)
    args = {"command": "true"}
    payload = json.dumps(args).encode()
    assert json.loads(command([sys.executable, str(script)], stdin=payload)) == json.loads(
        tool("bash", args))
    cases = {
        "bash-tool": lambda: tool("bash", args),
        "stdlib script": lambda: command([sys.executable, str(script)], stdin=payload),
    }
    measured(cases, 5)
    report("bash round trip", measured(cases, rounds * 10), 1.25)


def bench_grep(rounds: int, tmp: Path) -> None:
    """grep-tool vs ``grep -rnE`` over ~40 MB of generated sources."""
    root = tmp / "sources"
    todos = source_tree(root, 40)
    found = json.loads(tool("grep", {"pattern": GREP_PATTERN}, cwd=root))["count"]
    theirs = command(["grep", "-rnE", GREP_PATTERN, "."], cwd=root).count(b"\n")
    assert found == theirs == todos, (found, theirs, todos)
    cases = {
        "grep-tool": lambda: tool("grep", {"pattern": GREP_PATTERN}, cwd=root),
        "grep -rnE": lambda: command(["grep", "-rnE", GREP_PATTERN, "."], cwd=root),
    }
    measured(cases, 1)
    report(f"grep over 40 MB ({found} matches)", measured(cases, rounds), 3.0)


def bench_glob(rounds: int, tmp: Path) -> None:
    """glob-tool ``**/*.c`` vs ``find -name '*.c'`` over 100,000 files."""
    root = tmp / "files"
    file_tree(root, 100_000)
    found = json.loads(tool("glob", {"pattern": "**/*.c"}, cwd=root))["count"]
    theirs = command(["find", ".", "-name", "*.c"], cwd=root).count(b"\n")
    assert found == theirs, (found, theirs)
    cases = {
        "glob-tool": lambda: tool("glob", {"pattern": "**/*.c"}, cwd=root),
        "find -name": lambda: command(["find", ".", "-name", "*.c"], cwd=root),
    }
    measured(cases, 1)
    report(f"glob over 100,000 files ({found} matches)", measured(cases, rounds), 2.0)


def bench_startup(rounds: int) -> None:
    """Context for the ratios: what starting this interpreter costs before any tool code runs."""
    medians = interleaved({"python -c pass": lambda: command([sys.executable, "-c", "pass"])},
                          rounds * 5)
    print(f"interpreter start-up alone (site hooks of this environment included):"
          f" {ms(medians['python -c pass'])}", flush=True)


def main(rounds: int = 7) -> None:
    """Build the trees, run the three comparisons, clean up."""
    for name in ("bash", "grep", "glob"):
        if not (BIN / f"{name}-tool").exists():
            raise SystemExit(f"{BIN / (name + '-tool')} is missing: run `pip install -e .` first")
    bench_startup(rounds)
    with tempfile.TemporaryDirectory() as tmp:
        bench_bash(rounds, Path(tmp))
        bench_grep(rounds, Path(tmp))
        bench_glob(rounds, Path(tmp))


if __name__ == "__main__":
    main(*(int(arg) for arg in sys.argv[1:2]))
