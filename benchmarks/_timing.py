"""Timing helpers the benchmarks share: wall-clock medians of interleaved runs."""

from __future__ import annotations

import re
import resource
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence


def timed(fn: Callable[[], object]) -> float:
    """Seconds ``fn()`` took."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run_command(argv: Sequence[str], env: Mapping[str, str] | None = None,
                cwd: str | None = None) -> None:
    """Run ``argv`` to completion, stdout discarded; a failure stops the benchmark in one line."""
    ran = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if ran.returncode != 0:
        last = (ran.stderr.decode(errors="replace").strip().splitlines() or ["(no stderr)"])[-1]
        raise SystemExit(f"benchmark stopped: `{' '.join(argv)}` exited {ran.returncode}: {last}")


def interleaved(cases: Mapping[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per case, the cases taking turns each round so drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            samples[name].append(timed(fn))
    return {name: statistics.median(times) for name, times in samples.items()}


def ms(seconds: float) -> str:
    """``12.3 ms``."""
    return f"{seconds * 1000:.1f} ms"


def measured(cases: dict, rounds: int) -> dict[str, tuple[float, float]]:
    """Median (wall seconds, CPU seconds of the child) per case, the cases taking turns.

    CPU time (user + system) is what the process itself costs; wall time also counts the time
    it waited for a core, which on a busy machine hurts the longer-running process most.
    """
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            fn()
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            samples[name].append((wall, cpu))
    return {
        name: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for name, runs in samples.items()
    }


def report(title: str, medians: dict[str, tuple[float, float]], target: float) -> None:
    """Print both medians and their ratios, by wall-clock and by CPU time."""
    (ours_name, (ours_wall, ours_cpu)), (theirs_name, (theirs_wall, theirs_cpu)) = medians.items()
    wall, cpu = ours_wall / theirs_wall, ours_cpu / max(theirs_cpu, 1e-6)
    verdict = "ok" if wall <= target else "OVER TARGET"
    print(f"{title}: {ours_name} {ms(ours_wall)} vs {theirs_name} {ms(theirs_wall)}"
          f" -> {wall:.2f}x wall (target <= {target}x, {verdict});"
          f" CPU {ms(ours_cpu)} vs {ms(theirs_cpu)} -> {cpu:.2f}x", flush=True)


def instructions(argv: Sequence[str], env: Mapping[str, str] | None = None,
                 cwd: str | None = None, stdin: bytes = b"") -> int | None:
    """Instructions ``argv`` executes (reading ``stdin``), counted by valgrind's callgrind
    (``None`` without valgrind); the processes it starts are not counted. Unlike time, the
    count does not depend on what else the machine is doing, so its ratios hold on a busy
    machine; it leaves out waiting and the cache's misses."""
    if shutil.which("valgrind") is None:
        return None
    ran = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          *argv], env=env, cwd=cwd, input=stdin, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    found = re.search(rb"Collected : (\d+)", ran.stderr)
    return int(found.group(1)) if found else None
