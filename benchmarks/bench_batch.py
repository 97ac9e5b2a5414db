"""``ikigai batch``: tasks per minute for quick tasks against a local fake model, on 1, 2 and
4 local worker processes and on a two-worker-node Ray cluster started here (when Ray is
installed), and what one task costs against one bare ``ikigai ask`` (issue 28).

Run on demand: ``python benchmarks/bench_batch.py [TASKS]`` (default 500). Each case is one
``ikigai batch`` process run to completion, its results checked; the ask baseline is the
median of 9 ``ikigai ask`` processes answering the same kind of prompt.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _timing import interleaved, ms, run_command

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support

from tests.support.echo_model import EchoModel  # noqa: E402
from tests.support.raycluster import LocalRayCluster, RayUnavailable  # noqa: E402

IKIGAI = [sys.executable, "-m", "ikigai_core.cli"]


def run_batch(folder: Path, env: dict[str, str], name: str, *options: str) -> float:
    """Seconds one ``ikigai batch`` took; the benchmark stops unless every task is done."""
    out = folder / f"{name}.jsonl"
    out.unlink(missing_ok=True)
    start = time.perf_counter()
    run_command([*IKIGAI, "batch", "tasks.jsonl", "--out", str(out), *options], env=env,
                cwd=str(folder))
    seconds = time.perf_counter() - start
    statuses = [json.loads(line)["status"] for line in out.read_text().splitlines()]
    if statuses.count("done") != len(statuses):
        raise SystemExit(f"benchmark stopped: {name}: not every task is done")
    return seconds


def main(count: int) -> None:
    model = EchoModel()
    folder = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    env = {**os.environ, **model.environ, "IKIGAI_HOME": str(folder / "home")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    (folder / "tasks.jsonl").write_text("".join(
        json.dumps({"id": f"t{i}", "prompt": f"hello {i}"}) + "\n" for i in range(count)))
    rows: dict[str, float] = {}
    try:
        run_command([*IKIGAI, "ask", "warm-up"], env=env, cwd=str(folder))
        ask = interleaved({"ask": lambda: run_command([*IKIGAI, "ask", "hello"], env=env,
                                                      cwd=str(folder))}, 9)["ask"]
        for workers in (1, 2, 4):
            rows[f"{workers} local worker(s)"] = run_batch(folder, env, f"local{workers}",
                                                           "--workers", str(workers))
        try:
            cluster = LocalRayCluster(2)
        except RayUnavailable as exc:
            print(f"Ray cluster: skipped ({exc})")
        else:
            try:
                rows["Ray, 2 worker nodes"] = run_batch(folder, env, "ray", "--ray",
                                                        cluster.address)
            finally:
                cluster.close()
    finally:
        model.close()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{count} tasks, one model turn each, fake model on 127.0.0.1; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print(f"{'where':24} {'wall':>9} {'tasks/min':>10} {'per task':>10}")
    for name, seconds in rows.items():
        print(f"{name:24} {seconds:8.1f}s {count / seconds * 60:10.0f} {ms(seconds / count):>10}")
    one = rows["1 local worker(s)"] / count
    print(f"one bare `ikigai ask`: {ms(ask)}; a task on one worker: {ms(one)} "
          f"({one / ask:.0%} of an ask: the worker's interpreter and imports are paid once)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
