"""``bash-tool``: run a command with ``/bin/sh -c``, or in the shell ``IKIGAI_SHELL`` names
(ikigai's ``shell`` setting: bash, zsh, fish, pwsh); stderr merged into ``output``, stdin closed."""

from __future__ import annotations

import os
import select
import time

# The constants straight from the C module: ``signal`` wraps them in enums, and importing
# ``enum`` was a sixth of this tool's start.
from _signal import SIGPIPE, SIGXFSZ

from ikigai_tools_builtin._budget import Capture, Text, budget
from ikigai_tools_builtin._protocol import run_tool

SCHEMA = {
    "name": "bash",
    "description": "Execute a shell command and return output",
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "Shell command to execute"}},
        "required": ["command"],
    },
}
SHELL = "/bin/sh"
"""The shell when ``IKIGAI_SHELL`` names none (or ``sh``)."""
SHELL_FLAGS = {"sh": ("-c",), "bash": ("-c",), "zsh": ("-c",), "fish": ("-c",),
               "pwsh": ("-NoLogo", "-NoProfile", "-NonInteractive", "-Command")}
"""Each shell ``IKIGAI_SHELL`` may name, found on ``PATH``, and what comes before the command."""
CHUNK = 1 << 16
POLL_MS = 50  # fallback check interval where pidfd_open is missing
DRAIN_SECONDS = 0.5  # bound on reading what a background job keeps writing after the shell exits


def handle(args: dict) -> dict:
    """Run ``args["command"]`` in the current directory and return its output and exit code."""
    command = args["command"]
    if not command.strip():
        return {"output": "sh: empty command", "exit_code": 127}
    name = os.environ.get("IKIGAI_SHELL") or "sh"
    if name not in SHELL_FLAGS:
        return {"output": f"IKIGAI_SHELL={name} is not a shell the bash tool knows; use one "
                          f"of {', '.join(SHELL_FLAGS)}", "exit_code": 127}
    shell = SHELL if name == "sh" else name
    capture = Capture(budget())
    try:
        status = _run([shell, *SHELL_FLAGS[name], command], capture)
    except OSError as exc:
        hint = "" if name == "sh" else "; install it, or set shell (IKIGAI_SHELL) to another"
        return {"output": f"{name}: cannot run {shell}: {exc.strerror}{hint}", "exit_code": 127}
    text = Text.from_capture(capture)
    _strip_newline(text)
    code = os.waitstatus_to_exitcode(status)
    return {"output": text, "exit_code": 128 - code if code < 0 else code}


def _strip_newline(text: Text) -> None:
    """Drop one trailing newline from the output, as seed 001 asks."""
    if text.tail.endswith("\n"):
        text.tail = text.tail[:-1]
    elif not text.tail and text.head.endswith("\n"):
        text.head = text.head[:-1]
    else:
        return
    text.total_bytes -= 1


def _run(argv: list[str], capture: Capture) -> int:
    """Run ``argv`` (its program found on ``PATH``) with stdout and stderr on one pipe into
    ``capture``; returns the wait status.

    Returns as soon as the shell has exited and the pipe holds nothing more, even when a
    background job the command started keeps the pipe open.
    """
    read_end, write_end = os.pipe()
    try:
        pid = os.posix_spawnp(
            argv[0],
            argv,
            os.environ,
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, write_end, 1),
                (os.POSIX_SPAWN_DUP2, write_end, 2),
                (os.POSIX_SPAWN_CLOSE, read_end),
            ],
            setsigdef=(SIGPIPE, SIGXFSZ),  # Python ignores them; commands must not
        )
    finally:
        os.close(write_end)
    try:
        return _collect(pid, read_end, capture)
    finally:
        os.close(read_end)


def _collect(pid: int, read_end: int, capture: Capture) -> int:
    """Feed the pipe into ``capture`` until the shell ``pid`` has exited; returns its status."""
    poller = select.poll()
    poller.register(read_end, select.POLLIN)
    pidfd = _pidfd(pid)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    try:
        while True:
            events = dict(poller.poll(None if pidfd is not None else POLL_MS))
            if events.get(read_end):
                chunk = os.read(read_end, CHUNK)
                if chunk:
                    capture.feed(chunk)
                else:  # EOF: only the shell's exit is left to wait for
                    poller.unregister(read_end)
                    if pidfd is None:
                        return os.waitpid(pid, 0)[1]
            if pidfd is not None and not events.get(pidfd):
                continue
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                _drain(read_end, capture)
                return status
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    """A file descriptor that becomes readable when ``pid`` exits, where the kernel has one."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _drain(read_end: int, capture: Capture) -> None:
    """Read what is already in the pipe, without waiting for writers that are still alive."""
    os.set_blocking(read_end, False)
    deadline = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < deadline:
        try:
            chunk = os.read(read_end, CHUNK)
        except BlockingIOError:
            return
        if not chunk:
            return
        capture.feed(chunk)


def main() -> None:
    """Console script entry point."""
    run_tool(SCHEMA, handle)
