"""Timing helpers the benchmarks share: wall-clock medians of interleaved runs."""

from __future__ import annotations

import statistics
import subprocess
import time
from typing import Callable, Mapping, Sequence


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
