"""Library code changes no process-wide state (issue 23, item 5): ``main()`` called
in-process, as tests and embedding programs do, leaves the collector and the signal
handlers as it found them, and importing httpx through the core leaves no stub behind."""

from __future__ import annotations

import subprocess
import sys

_SCRIPT = """
import gc, signal, sys
from ikigai_core.cli import main
from ikigai_core.transport import http_timeout

def state():
    return (gc.isenabled(), gc.get_freeze_count(), signal.getsignal(signal.SIGTERM))

before = state()
for argv in (["tool", "list"], ["--help"]):
    try:
        main(argv)
    except SystemExit:
        pass
http_timeout({})  # imports httpx
print("STATE", before == state(), "httpx" in sys.modules, "httpx._main" in sys.modules,
      "rich" in sys.modules, file=sys.stderr)
"""


def test_main_in_process_changes_no_global_state(isolated_home, tmp_path):
    ran = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    line = next(line for line in ran.stderr.splitlines() if line.startswith("STATE"))
    # unchanged collector and SIGTERM handler; httpx imported, without its command line
    # (rich) and without a stub left in sys.modules
    assert line == "STATE True True False False", ran.stderr
