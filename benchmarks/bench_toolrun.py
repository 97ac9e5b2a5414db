"""``ikigai tool run bash '{"command":"true"}'`` against running ``bash-tool`` directly.

Run: ``python benchmarks/bench_toolrun.py`` (or ``python benchmarks/run.py toolrun``);
``IKIGAI_BENCH_ROUNDS`` (default 15) sets the rounds. The schema cache is warm. Target
(issue 14): at most 100 ms more than the tool alone. Also prints what importing jsonschema
costs, which arguments that surely pass their schema no longer pay.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import interleaved, ms, run_command

BIN = Path(sys.executable).parent
ROUNDS = int(os.environ.get("IKIGAI_BENCH_ROUNDS", "15"))
TARGET = 0.100
ARGS = '{"command": "true"}'


def main() -> None:
    """Warm the cache, then interleave the two commands and the import."""
    with tempfile.TemporaryDirectory(prefix="ikigai-bench-") as home:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("IKIGAI_") and k != "PYTHONDONTWRITEBYTECODE"}
        env["IKIGAI_HOME"] = home
        ikigai = [str(BIN / "ikigai"), "tool", "run", "bash", ARGS]
        run_command(ikigai, env)

        def direct() -> None:
            subprocess.run([str(BIN / "bash-tool")], input=ARGS.encode(), env=env,
                           capture_output=True, check=True)

        medians = interleaved({
            "ikigai tool run bash": lambda: run_command(ikigai, env),
            "bash-tool": direct,
            "python -c 'import jsonschema'": lambda: run_command(
                [sys.executable, "-c", "import jsonschema"], env),
            "python -c pass": lambda: run_command([sys.executable, "-c", "pass"], env),
        }, ROUNDS)
    ours, theirs, schema, bare = medians.values()
    extra = ours - theirs
    print(f"ikigai tool run bash {ms(ours)} vs bash-tool {ms(theirs)}: {ms(extra)} more"
          f" (target <= {ms(TARGET)}, {'ok' if extra <= TARGET else 'OVER TARGET'});"
          f" importing jsonschema costs {ms(schema - bare)}", flush=True)


if __name__ == "__main__":
    main()
