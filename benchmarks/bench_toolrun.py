"""``ikigai tool run bash '{"command":"true"}'`` against running ``bash-tool`` directly.

Run: ``python benchmarks/bench_toolrun.py`` (or ``python benchmarks/run.py toolrun``);
``IKIGAI_BENCH_ROUNDS`` (default 20) sets the rounds. The home's caches are warm (schemas,
entry points, provider key variables). Target (issue 14): at most 100 ms more than the tool
alone, wall-clock: the median of each round's difference, the two run in turn. Also counts
each process's instructions (callgrind, when valgrind is installed), which a busy machine
does not change.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import instructions, ms, run_command, timed

BIN = Path(sys.executable).parent
ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "20"))
TARGET = 0.100
ARGS = '{"command": "true"}'


def main() -> None:
    """Warm the caches, then time the two commands in turn and count their instructions."""
    with tempfile.TemporaryDirectory(prefix="ikigai-bench-") as home:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("IKIGAI_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["IKIGAI_HOME"] = home
        ikigai = [str(BIN / "ikigai"), "tool", "run", "bash", ARGS]
        tool = [str(BIN / "bash-tool")]
        run_command(ikigai, env)

        def direct() -> None:
            subprocess.run(tool, input=ARGS.encode(), env=env, capture_output=True, check=True)

        ours, theirs = [], []
        for _ in range(ROUNDS):
            ours.append(timed(lambda: run_command(ikigai, env)))
            theirs.append(timed(direct))
        extra = statistics.median(a - b for a, b in zip(ours, theirs, strict=True))
        ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
        print(f"tool run: ikigai tool run bash {ms(ours_median)} vs bash-tool "
              f"{ms(theirs_median)} ({ours_median / theirs_median:.2f}x): {ms(extra)} more, "
              f"median of {ROUNDS} rounds (target <= {ms(TARGET)}: "
              f"{'PASS' if extra <= TARGET else 'FAIL'})", flush=True)
        counted = instructions(ikigai, env), instructions(tool, env, stdin=ARGS.encode())
        if counted[0] and counted[1]:
            print(f"  instructions (callgrind): ikigai's own process {counted[0] / 1e6:.1f} M "
                  f"(the tool it starts not counted), bash-tool {counted[1] / 1e6:.1f} M",
                  flush=True)


if __name__ == "__main__":
    main()
