"""Run one child process under a time and output budget: one thread, no polling, no leaks.

The child gets its own session (so its whole process group can be killed) and only
fds 0-2. Its stdin is written and its stdout and stderr read concurrently with one
selector; the main process's exit is watched with a pidfd in the same selector, so
a grandchild that keeps stdout open cannot hold the call (issue 2, "Process groups").
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from ikigai_core import orphan_guard

KILL_GRACE = 2.0
"""Seconds a process group gets between SIGTERM and SIGKILL."""

_READ_SIZE = 64 * 1024
_POLL_INTERVAL = 0.05  # only without pidfd (not Linux): how often to check for exit
_MAX_WAIT = 3600.0  # longest single wait: poll() cannot take a huge (or infinite) timeout
_live_groups: dict[int, object | None] = {}  # process group -> kill scope, of the children
_live_lock = threading.Lock()                 # running now (terminate_all)
KILL_SCOPE: ContextVar[object | None] = ContextVar("ikigai_kill_scope", default=None)
"""The scope of the children :func:`run_process` starts in this context: a
:func:`terminate_all` given that scope kills them, and no one else's (one sub-agent
stopped leaves its siblings' tools running)."""


@dataclass(frozen=True)
class ProcessResult:
    """What one child process did.

    :param exit_code: 0..255, or 128+N when killed by signal N.
    :param stdout: at most ``max_stdout`` bytes (what was read before overflow or timeout).
    :param stderr: the last ``max_stderr`` bytes.
    :param timed_out: the time budget ran out and the group was killed.
    :param overflowed: stdout exceeded ``max_stdout``: reading stopped, the group was killed.
    :param elapsed: seconds from start to reaped.
    :param starved: on a timeout, seconds the process had been waiting for a processor
        (Linux; 0 elsewhere): a busy machine, not a slow tool, may have spent its budget.
    """

    exit_code: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    overflowed: bool
    elapsed: float
    starved: float = 0.0


def run_process(
    argv: Sequence[str],
    *,
    stdin: bytes | None,
    timeout: float,
    max_stdout: int,
    max_stderr: int = 65536,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    kill_grace: float = KILL_GRACE,
    on_start: Callable[[int], None] | None = None,
) -> ProcessResult:
    """Run ``argv`` with ``stdin`` (``None``: /dev/null) and collect what it prints.

    ``on_start(pid)`` is called once the process exists.

    Returns as soon as the main process exits; its process group is then sent SIGTERM,
    and SIGKILL follows in the background for survivors. On timeout or stdout overflow
    the group gets SIGTERM, then SIGKILL after ``kill_grace`` seconds (0: SIGKILL at once,
    for a child with nothing worth saving). If the caller is interrupted
    (KeyboardInterrupt, SystemExit, ...) the group is killed and the exception re-raised.
    Raises ``OSError`` only when the process cannot be started.
    """
    with selectors.DefaultSelector() as selector:
        proc = subprocess.Popen(
            argv,
            bufsize=0,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env,
            close_fds=True,
            start_new_session=True,
        )
        start = time.monotonic()  # the budget starts with the process, not with the fork
        if on_start is not None:
            on_start(proc.pid)
        run = _Run(proc, selector, max_stdout=max_stdout, max_stderr=max_stderr,
                   kill_grace=kill_grace)
        with _live_lock:
            _live_groups[run.pgid] = KILL_SCOPE.get()
        orphan_guard.started(run.pgid)
        try:
            run.start(stdin or b"")
            run.pump(start, timeout)
            run.finish()
        except BaseException:
            run.abort()
            raise
        finally:
            with _live_lock:
                _live_groups.pop(run.pgid, None)
            if not run.lingering:
                orphan_guard.ended(run.pgid)
            run.close()
    code = proc.returncode
    return ProcessResult(
        exit_code=128 - code if code < 0 else code,
        stdout=bytes(run.stdout),
        stderr=bytes(run.stderr),
        timed_out=run.timed_out,
        overflowed=run.overflowed,
        elapsed=time.monotonic() - start,
        starved=run.starved,
    )


def is_running(pid: int) -> bool:
    """Whether process ``pid`` is running or waiting for a processor (state ``R`` in Linux's
    ``/proc/PID/stat``); True where that cannot be read, so callers stay on the safe side."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return file.read().rpartition(b")")[2].split()[0] == b"R"
    except FileNotFoundError:  # gone, unless there is no /proc at all
        return not os.path.isdir("/proc/self")
    except (OSError, IndexError):
        return True


def _cpu_wait(pid: int, elapsed: float) -> float:
    """Seconds process ``pid``, started ``elapsed`` seconds ago, has spent runnable but waiting
    for a processor; 0 where Linux's ``/proc/PID/schedstat`` cannot be read.

    Its run delay counts a wait only once the wait ends, so a process waiting right now (state
    ``R``) counts every second of ``elapsed`` in which it did not run.
    """
    stats = _schedstat(pid)
    if stats is None:
        return 0.0
    ran, delay = stats
    return max(delay, elapsed - ran) if is_running(pid) else delay


def _schedstat(pid: int) -> tuple[float, float] | None:
    """Seconds process ``pid`` has run, and has waited for a processor (waits that ended)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as file:
            ran, delay = file.read().split()[:2]
        return int(ran) / 1e9, int(delay) / 1e9
    except (OSError, ValueError):
        return None


def start_failure(program: str, exc: OSError) -> str:
    """Why ``program`` could not be started, in words. A ``#!`` line naming a missing
    interpreter is reported by the kernel as the program itself not found: name the
    interpreter instead."""
    if exc.errno == errno.ENOENT and exc.filename == program and os.path.exists(program):
        interpreter = _interpreter(program)
        if interpreter is not None and not os.path.exists(interpreter):
            return f"its interpreter {interpreter} (the #! line of {program}) does not exist"
    return f"{exc.strerror} ({exc.filename})" if exc.filename else str(exc)


def _interpreter(path: str) -> str | None:
    """The program a script's ``#!`` line names, if it has one."""
    try:
        with open(path, "rb") as script:
            line = script.readline(256)
    except OSError:
        return None
    words = line[2:].split() if line.startswith(b"#!") else []
    return os.fsdecode(words[0]) if words else None


def terminate_all(scope: object | None = None) -> None:
    """SIGKILL the process group of every child :func:`run_process` is running right now;
    with ``scope``, of those started under that :data:`KILL_SCOPE` only.

    For Ctrl-C in the agent loop: the main thread kills the tools its workers wait on,
    and each worker's ``run_process`` then returns as for a killed child.
    """
    with _live_lock:
        groups = [pgid for pgid, owner in _live_groups.items()
                  if scope is None or owner is scope]
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)


def terminate_until(finished: Callable[[float], bool], poll: float = 0.05,
                    scope: object | None = None) -> None:
    """Kill every running child (of ``scope``: :func:`terminate_all`) until
    ``finished(poll)`` (which waits up to ``poll`` seconds for the work to end) says the
    work is over: a worker may start a child late."""
    while True:
        terminate_all(scope)
        if finished(poll):
            return


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to the group (0: just look); whether any member was there to get it."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):  # gone, or only setuid members we may not touch
        return False
    return True


def _kill_lingering(pgid: int) -> None:
    """The grace a finished tool's grandchildren had is over: SIGKILL what is left."""
    _signal_group(pgid, signal.SIGKILL)
    orphan_guard.ended(pgid)


def _open_pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: fall back to polling
        return None


class _Run:
    """One running child: its pipes, its pidfd, and what it printed so far."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        selector: selectors.BaseSelector,
        *,
        max_stdout: int,
        max_stderr: int,
        kill_grace: float,
    ):
        self.proc = proc
        self.selector = selector
        self.pgid = proc.pid  # start_new_session: the child leads its own group
        self.max_stdout = max_stdout
        self.max_stderr = max_stderr
        self.kill_grace = kill_grace
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.timed_out = self.overflowed = self.exited = False
        self.lingering = False  # the leader is reaped, a grandchild has kill_grace to end
        self.starved = 0.0
        self.pending = memoryview(b"")
        self.pidfd: int | None = None
        self.readers: dict[int, Callable[[bytes], None]] = {}

    def start(self, data: bytes) -> None:
        """Watch stdin (if piped), stdout, stderr and the pidfd."""
        proc = self.proc
        assert proc.stdout is not None and proc.stderr is not None
        for pipe, sink in ((proc.stdout, self._on_stdout), (proc.stderr, self._on_stderr)):
            os.set_blocking(pipe.fileno(), False)
            self.readers[pipe.fileno()] = sink
            self.selector.register(pipe.fileno(), selectors.EVENT_READ, self._read)
        if proc.stdin is not None:
            self.pending = memoryview(data)
            if data:
                os.set_blocking(proc.stdin.fileno(), False)
                self.selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE, self._write)
            else:
                proc.stdin.close()
        self.pidfd = _open_pidfd(proc.pid)
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ, self._on_exit)

    def pump(self, start: float, timeout: float) -> None:
        """Move bytes until the main process exits, stdout overflows or ``timeout`` seconds
        have passed since ``start``.

        Past the deadline, what is ready is served once more before the call counts as timed
        out: this thread may have waited for a processor while the child finished in time.
        """
        while True:
            remaining = start + timeout - time.monotonic()
            wait = _MAX_WAIT if self.pidfd is not None else _POLL_INTERVAL
            self._dispatch(min(max(remaining, 0), wait))
            if self.pidfd is None and self.proc.poll() is not None:
                self.exited = True
            if self.exited or self.overflowed:
                return
            if remaining <= 0:
                self.timed_out = True
                self.starved = _cpu_wait(self.proc.pid, time.monotonic() - start)
                return

    def finish(self) -> None:
        """Collect what is buffered, end the process group and reap the main process."""
        if self.exited:
            self._drain()
            # The main process is a zombie until reaped, so its pgid cannot be reused yet.
            _signal_group(self.pgid, signal.SIGTERM)
            self.proc.wait()
            if _signal_group(self.pgid, 0):  # a grandchild: kill it later, without waiting
                self.lingering = True
                timer = threading.Timer(self.kill_grace, _kill_lingering, (self.pgid,))
                timer.daemon = True
                timer.start()
            return
        if self.kill_grace > 0:
            _signal_group(self.pgid, signal.SIGTERM)
            try:
                self.proc.wait(self.kill_grace)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(self.pgid, signal.SIGKILL)
        self.proc.wait()
        self._drain()

    def abort(self) -> None:
        """The caller was interrupted: kill the whole group now and reap."""
        _signal_group(self.pgid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        """Close every fd this run opened (the selector is the caller's)."""
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        if self.pidfd is not None:
            os.close(self.pidfd)

    def _write(self, fd: int) -> None:
        try:
            written = os.write(fd, self.pending)
        except BlockingIOError:  # pragma: no cover - the selector said there was room
            return
        except BrokenPipeError:  # the tool closed stdin or exited without reading it
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            assert self.proc.stdin is not None
            self.selector.unregister(fd)
            self.proc.stdin.close()

    def _read(self, fd: int) -> None:
        """Read once from ``fd`` (known to be ready) into its sink; stop at end of file."""
        data = os.read(fd, _READ_SIZE)
        if data:
            self.readers[fd](data)
        else:
            self._stop_reading(fd)

    def _stop_reading(self, fd: int) -> None:
        self.selector.unregister(fd)
        del self.readers[fd]

    def _on_stdout(self, data: bytes) -> None:
        self.stdout += data
        if len(self.stdout) > self.max_stdout:
            del self.stdout[self.max_stdout :]
            self.overflowed = True
            self._stop_reading(self.proc.stdout.fileno())  # type: ignore[union-attr]

    def _on_stderr(self, data: bytes) -> None:
        self.stderr += data
        excess = len(self.stderr) - self.max_stderr
        if excess > 0:
            del self.stderr[:excess]

    def _on_exit(self, fd: int) -> None:
        self.exited = True

    def _dispatch(self, timeout: float) -> None:
        """Serve every fd that is ready within ``timeout`` seconds, once."""
        for key, _ in self.selector.select(timeout):
            key.data(key.fd)

    def _drain(self) -> None:
        """One pass over what is ready right now: a grandchild may keep the pipes open and busy."""
        self._dispatch(0)
