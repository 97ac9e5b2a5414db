"""grep-tool and glob-tool against ripgrep on a big real tree (issue 14), on demand only.

Run: ``python benchmarks/bench_search.py`` (or ``python benchmarks/run.py search``);
``IKIGAI_BENCH_ROUNDS`` (default 5) sets the rounds. The tree (Django, sympy, numpy and scipy
unpacked from their wheels, see ``_bigtree.py``) is built on first use and kept.
Targets, each a ratio against its baseline measured in the same run:
- grep-tool within 1.5x of ``rg -n`` for a literal, a rare literal and an alternation, with the
  same match count as ``rg -n`` and the same output as grep-tool's pure-Python engine;
- with ``IKIGAI_MAX_OUTPUT_BYTES=65536`` and pattern ``.``: peak RSS at most 64 MiB and at
  most 1.2x the time of the rare literal under the same budget;
- glob-tool ``**/*.py`` within 1.2x of ``rg --files -g '**/*.py'``, listing the same files;
  its peak RSS for ``**/*`` with the 64 KiB budget is printed beside the unbudgeted one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from _bigtree import tree
from _timing import measured, report

BIN = Path(sys.executable).parent
RG = os.path.join(sysconfig.get_path("scripts"), "rg")
ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "5"))
PATTERNS = {"literal": "import", "rare literal": "Tessellation", "alternation": "(TODO|FIXME|XXX)"}
BUDGET = {"IKIGAI_MAX_OUTPUT_BYTES": "65536"}
RSS_HELPER = """\
import resource, subprocess, sys
subprocess.run(sys.argv[1:], input=sys.stdin.buffer.read(), stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def run(argv: list[str], cwd: Path, stdin: bytes | None = None, env: dict | None = None) -> bytes:
    """stdout of ``argv``; exit 0, or 1 for ``rg`` finding nothing, else the benchmark stops.

    Without ``stdin`` the command's stdin is ``/dev/null``, as on a terminal: ``rg`` given a
    pipe and no path would search the pipe.
    """
    ran = subprocess.run(argv, input=stdin, capture_output=True, cwd=cwd,
                         stdin=subprocess.DEVNULL if stdin is None else None,
                         env={**os.environ, **(env or {})})
    if ran.returncode not in (0, 1):
        raise SystemExit(f"benchmark stopped: {argv[0]} exited {ran.returncode}: {ran.stderr!r}")
    return ran.stdout


def tool(name: str, args: dict, cwd: Path, env: dict | None = None) -> bytes:
    """stdout of an installed ``<name>-tool``."""
    return run([str(BIN / f"{name}-tool")], cwd, json.dumps(args).encode(), env)


def bench_grep(root: Path) -> None:
    """The three patterns: same matches, then the timings side by side."""
    for label, pattern in PATTERNS.items():
        args = {"pattern": pattern}
        ours = json.loads(tool("grep", args, root))
        python = json.loads(tool("grep", args, root, {"IKIGAI_RIPGREP": ""}))
        theirs = run([RG, "-n", pattern], root).count(b"\n")
        assert ours == python, f"{label}: ripgrep and Python engines differ"
        assert ours["count"] == theirs, (label, ours["count"], theirs)
        cases = {"grep-tool": lambda args=args: tool("grep", args, root),
                 "rg -n": lambda pattern=pattern: run([RG, "-n", pattern], root)}
        measured(cases, 1)
        report(f"grep {label} {pattern!r} ({theirs} matches)", measured(cases, ROUNDS), 1.5)


def peak_rss_mib(argv: list[str], cwd: Path, stdin: bytes, env: dict) -> float:
    """Peak RSS of ``argv`` and its children, in MiB, measured in a fresh helper process."""
    out = run([sys.executable, "-c", RSS_HELPER, *argv], cwd, stdin, env)
    return int(out) / 1024


def bench_budget(root: Path) -> None:
    """Pattern ``.`` under a 64 KiB budget: bounded memory, and no slower than a rare literal."""
    every = {"pattern": "."}
    rare = {"pattern": PATTERNS["rare literal"]}
    result = json.loads(tool("grep", every, root, BUDGET))
    assert "truncated" in result, "pattern . should exceed the budget"
    grep = [str(BIN / "grep-tool")]
    rss = peak_rss_mib(grep, root, json.dumps(every).encode(), BUDGET)
    print(f"grep '.' peak RSS with a 64 KiB budget: {rss:.1f} MiB (target <= 64 MiB,"
          f" {'ok' if rss <= 64 else 'OVER TARGET'})",
          flush=True)
    cases = {"grep '.' (budget)": lambda: tool("grep", every, root, BUDGET),
             "grep rare literal (budget)": lambda: tool("grep", rare, root, BUDGET)}
    measured(cases, 1)
    report("grep '.' vs a rare literal, both within 64 KiB", measured(cases, ROUNDS), 1.2)


def bench_glob(root: Path) -> None:
    """``**/*.py``: the same files as ``rg --files`` (ignore files off), then the timings."""
    ours = json.loads(tool("glob", {"pattern": "**/*.py"}, root))["output"].split("\n")
    theirs = sorted(run([RG, "--files", "--no-ignore", "-g", "**/*.py"], root).decode().split())
    assert ours == theirs, (len(ours), len(theirs))
    cases = {"glob-tool": lambda: tool("glob", {"pattern": "**/*.py"}, root),
             "rg --files -g": lambda: run([RG, "--files", "-g", "**/*.py"], root)}
    measured(cases, 1)
    report(f"glob '**/*.py' ({len(ours)} files)", measured(cases, ROUNDS), 1.2)
    every = json.dumps({"pattern": "**/*"}).encode()
    glob = [str(BIN / "glob-tool")]
    print(f"glob '**/*' peak RSS: {peak_rss_mib(glob, root, every, BUDGET):.1f} MiB with a 64 KiB"
          f" budget, {peak_rss_mib(glob, root, every, {}):.1f} MiB without", flush=True)


def main() -> None:
    """Build (or reuse) the tree, then run the comparisons."""
    if not os.access(RG, os.X_OK):
        raise SystemExit(f"{RG} is missing: install the project (it depends on ripgrep)")
    root = tree()
    bench_grep(root)
    bench_budget(root)
    bench_glob(root)


if __name__ == "__main__":
    main()
