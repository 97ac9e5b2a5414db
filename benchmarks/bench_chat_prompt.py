"""Time from ``ikigai chat`` to its first prompt on a terminal, side by side in one run.

Run on demand: ``python benchmarks/bench_chat_prompt.py [ROUNDS]``. On a pseudo-terminal,
the rendered chat (rich, prompt_toolkit) against ``chat --plain`` (the readline prompt every
chat had before issue 13) and against the floor ``python -c "import click, pluggy"``; each
until its prompt is drawn. A user tool whose ``--schema`` takes 2 s keeps discovery running,
so each figure also says whether the prompt came before discovery ended (it must). CPU time
(the process's own, its threads included) is printed beside the wall-clock time: on a busy
shared machine it is the steadier figure.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import sys
import tempfile
import time
from pathlib import Path

from _timing import measured, ms

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
SLOW_SCHEMA = 2.0


def until(argv: list[str], marker: bytes, env: dict[str, str]) -> None:
    """Start ``argv`` on a new terminal and return once it printed ``marker``; then kill it."""
    pid, fd = pty.fork()
    if pid == 0:  # the child
        os.execve(argv[0], argv, env)
    seen = b""
    deadline = time.monotonic() + 30
    try:
        while marker not in seen:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise SystemExit(f"benchmark stopped: no {marker!r} from {argv} in 30 s: {seen!r}")
            try:
                seen += os.read(fd, 65536)
            except OSError:
                raise SystemExit(
                    f"benchmark stopped: {argv} closed the terminal: {seen!r}") from None
            if b"\x1b[6n" in seen:  # prompt_toolkit asks where the cursor is: answer
                os.write(fd, b"\x1b[1;1R")
                seen = seen.replace(b"\x1b[6n", b"")
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as home:
        tools = Path(home, "tools")
        tools.mkdir()
        slow = tools / "slow-tool"
        slow.write_text(f"#!{sys.executable}\nimport json, sys, time\ntime.sleep({SLOW_SCHEMA})\n"
                        "print(json.dumps({'name': 'slow', 'description': 'd', "
                        "'parameters': {'type': 'object'}}))\n")
        slow.chmod(0o755)
        env = {**os.environ, "IKIGAI_HOME": home, "OPENAI_API_KEY": "sk-bench",
               "TERM": "xterm-256color", "IKIGAI_SCHEMA_TIMEOUT": "10", "COLUMNS": "100",
               "LINES": "30"}
        env.pop("NO_COLOR", None)
        chat = [IKIGAI, "chat", "--provider", "openai"]
        cases = {
            "import click, pluggy": lambda: until(
                [sys.executable, "-c", "import click, pluggy; print('ready')"], b"ready", env),
            "chat --plain (before)": lambda: until([*chat, "--plain"], b"\n> ", env),
            "chat (rendered)": lambda: until(chat, b"tokens:", env),
        }
        medians = measured(cases, rounds)
    floor, floor_cpu = medians["import click, pluggy"]
    for name, (seconds, cpu) in medians.items():
        line = (f"{name:24} {ms(seconds):>10} {seconds / floor:5.2f}x the floor; "
                f"CPU {ms(cpu):>9} {cpu / floor_cpu:5.2f}x")
        if name.startswith("chat"):
            line += f"  prompt before discovery ends: {'yes' if seconds < SLOW_SCHEMA else 'NO'}"
        print(line)
    rendered, plain = medians["chat (rendered)"], medians["chat --plain (before)"]
    print(f"rendered / plain: {rendered[0] / plain[0]:.2f}x wall, "
          f"{rendered[1] / plain[1]:.2f}x CPU")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
