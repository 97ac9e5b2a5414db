"""run_process: real children under time and output budgets; no hang, no zombie, no leak."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from ikigai_core.process import KILL_GRACE, run_process, terminate_until
from tests.support.procs import open_fd_count, pid_alive, wait_gone

MIB = 1024 * 1024


@pytest.fixture(params=["pidfd", "polling"])
def exit_watch(request, monkeypatch):
    """Run the test with the pidfd exit watcher, then as on a platform without pidfd."""
    if request.param == "polling":
        monkeypatch.delattr(os, "pidfd_open")
    return request.param


def run(argv, *, stdin=b"", timeout=10.0, max_stdout=MIB, **kwargs):
    """run_process with roomy defaults."""
    return run_process([str(a) for a in argv], stdin=stdin, timeout=timeout,
                       max_stdout=max_stdout, **kwargs)


def test_stdin_reaches_the_tool_and_output_comes_back(tmp_path, make_shell_tool, exit_watch):
    tool = make_shell_tool(tmp_path, "echo-tool", "cat; echo oops >&2; exit 3\n")

    result = run([tool], stdin=b'{"a": 1}')

    assert (result.exit_code, result.stdout, result.stderr) == (3, b'{"a": 1}', b"oops\n")
    assert not result.timed_out and not result.overflowed
    assert 0 < result.elapsed < 5


def test_no_stdin_means_dev_null(tmp_path, make_shell_tool):
    tool = make_shell_tool(tmp_path, "schema-tool", "readlink /proc/self/fd/0; cat\n")

    result = run([tool], stdin=None)

    assert (result.exit_code, result.stdout) == (0, b"/dev/null\n")


def test_empty_stdin_is_closed_at_once(tmp_path, make_shell_tool):
    tool = make_shell_tool(tmp_path, "cat-tool", "cat; echo end\n")

    assert run([tool], stdin=b"").stdout == b"end\n"


def test_megabytes_flow_both_ways_at_once(tmp_path, make_shell_tool):
    """Written and read concurrently: a tool echoing 4 MiB would deadlock a naive caller."""
    tool = make_shell_tool(tmp_path, "cat-tool", "cat\n")
    data = os.urandom(4 * MIB)

    result = run([tool], stdin=data, max_stdout=8 * MIB)

    assert result.stdout == data and result.exit_code == 0


def test_tool_that_never_reads_a_big_stdin(tmp_path, make_shell_tool):
    tool = make_shell_tool(tmp_path, "deaf-tool", "echo '{}'\n")

    result = run([tool], stdin=b"x" * MIB)

    assert (result.exit_code, result.stdout) == (0, b"{}\n")
    assert result.elapsed < 5


def test_tool_closing_stdin_early(tmp_path, make_tool):
    tool = make_tool(tmp_path, "close-tool", body="os.close(0); time.sleep(0.2); print('{}')")

    result = run([tool], stdin=b"x" * MIB)

    assert (result.exit_code, result.stdout) == (0, b"{}\n")


@pytest.mark.parametrize(("size", "overflowed"), [(10, False), (11, True)])
def test_stdout_limit_is_exact(tmp_path, make_shell_tool, size, overflowed):
    tool = make_shell_tool(tmp_path, "n-tool", f"head -c {size} /dev/zero | tr '\\0' a\n")

    result = run([tool], max_stdout=10)

    assert result.stdout == b"a" * 10
    assert result.overflowed is overflowed


def test_endless_stdout_is_stopped(tmp_path, make_shell_tool):
    tool = make_shell_tool(tmp_path, "yes-tool", "exec yes\n")

    result = run([tool], max_stdout=1000)

    assert result.overflowed and len(result.stdout) == 1000
    assert result.exit_code == 128 + signal.SIGTERM
    assert result.elapsed < 5


def test_stderr_keeps_its_tail_and_never_overflows(tmp_path, make_tool):
    tool = make_tool(
        tmp_path,
        "noisy-tool",
        body="sys.stderr.write('a' * 5_000_000 + 'END'); sys.stderr.flush(); print('{}')",
    )

    result = run([tool], max_stdout=10, max_stderr=1000)

    assert not result.overflowed and result.stdout == b"{}\n"
    assert len(result.stderr) == 1000 and result.stderr.endswith(b"aaEND")


def test_timeout_returns_partial_output(tmp_path, make_shell_tool, exit_watch):
    tool = make_shell_tool(tmp_path, "slow-tool", "echo partial; echo warming >&2; exec sleep 30\n")

    result = run([tool], timeout=0.5)

    assert result.timed_out and not result.overflowed
    assert (result.stdout, result.stderr) == (b"partial\n", b"warming\n")
    assert result.exit_code == 128 + signal.SIGTERM
    assert 0.4 < result.elapsed < 5


def test_tool_ignoring_sigterm_is_killed(tmp_path, make_tool):
    tool = make_tool(
        tmp_path,
        "stubborn-tool",
        body="signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
        "time.sleep(60)",
    )

    result = run([tool], timeout=0.5)

    assert result.timed_out and result.exit_code == 128 + signal.SIGKILL
    assert result.elapsed < 0.5 + KILL_GRACE + 5


def test_grandchild_holding_stdout_does_not_hold_the_call(tmp_path, make_shell_tool, exit_watch):
    """The call returns when the tool exits; the grandchild, deaf to SIGTERM, is killed soon."""
    tool = make_shell_tool(
        tmp_path,
        "daemon-tool",
        """\
        (trap '' TERM; exec sleep 30) &
        echo $!
        head -c 50000 /dev/zero | tr '\\0' a
        """,
    )

    result = run([tool])

    assert result.exit_code == 0 and result.elapsed < 10
    pid_line, _, rest = result.stdout.partition(b"\n")
    assert rest == b"a" * 50000  # buffered output read after exit, though the pipe stays open
    assert wait_gone(int(pid_line), timeout=KILL_GRACE + 3)


def test_grandchild_flooding_stderr_does_not_hold_the_call(tmp_path, make_shell_tool):
    """What the pipes hold at exit is read once, not until a busy writer stops."""
    tool = make_shell_tool(tmp_path, "flood-tool", "yes >&2 &\necho $!\nsleep 0.2\n")

    result = run([tool], max_stderr=1000)

    assert result.exit_code == 0 and result.elapsed < 10
    assert len(result.stderr) == 1000 and set(result.stderr) == set(b"y\n")
    assert wait_gone(int(result.stdout), timeout=KILL_GRACE + 3)


def test_grandchild_dies_with_the_group(tmp_path, make_shell_tool):
    tool = make_shell_tool(tmp_path, "bg-tool", "sleep 30 &\necho $!\n")

    result = run([tool])

    assert wait_gone(int(result.stdout), timeout=KILL_GRACE + 3)


@pytest.mark.parametrize("sig", [signal.SIGSEGV, signal.SIGKILL])
def test_killed_by_signal_is_128_plus_n(tmp_path, make_shell_tool, sig):
    tool = make_shell_tool(tmp_path, "crash-tool", f"kill -{int(sig)} $$\n")

    assert run([tool]).exit_code == 128 + sig


def test_start_failures_raise_oserror(tmp_path, make_shell_tool):
    garbage = tmp_path / "garbage-tool"
    garbage.write_bytes(b"\x7fELF not really")
    garbage.chmod(0o755)
    not_executable = make_shell_tool(tmp_path, "plain-tool", "echo '{}'\n", mode=0o644)
    before = open_fd_count()

    with pytest.raises(FileNotFoundError):
        run([tmp_path / "missing-tool"])
    with pytest.raises(PermissionError):  # even root needs an x bit to exec
        run([not_executable])
    with pytest.raises(OSError, match="Exec format error"):
        run([garbage])
    assert open_fd_count() == before


def test_no_zombie_and_no_fd_leak(tmp_path, make_shell_tool):
    ok = make_shell_tool(tmp_path, "pid-tool", "echo $$\n")
    slow = make_shell_tool(tmp_path, "slow-tool", "echo $$; exec sleep 30\n")
    flood = make_shell_tool(tmp_path, "flood-tool", "echo $$; exec yes\n")
    run([ok])  # warm up anything opened once per process
    before = open_fd_count()
    pids = [int(run([ok], stdin=b"x" * 100_000).stdout) for _ in range(30)]
    pids.append(int(run([slow], timeout=0.2).stdout))
    pids.append(int(run([flood], max_stdout=100_000).stdout.split()[0]))

    assert open_fd_count() == before
    for pid in pids:
        with pytest.raises(ChildProcessError):  # reaped: not our child any more
            os.waitpid(pid, os.WNOHANG)


def test_only_fds_0_to_2_reach_the_tool(tmp_path, make_tool):
    tool = make_tool(
        tmp_path,
        "fds-tool",
        body="""\
        def is_open(fd):
            try:
                os.fstat(fd)
            except OSError:
                return False
            return True
        print(json.dumps([fd for fd in range(1024) if is_open(fd)]))
        """,
    )
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, True)
    try:
        result = run([tool])
    finally:
        os.close(read_end)
        os.close(write_end)

    assert result.stdout == b"[0, 1, 2]\n"


def test_cwd_and_env_are_the_callers(tmp_path, make_shell_tool):
    tool = make_shell_tool(tmp_path / "bin", "where-tool", 'pwd; echo "$GREETING"\n')

    result = run([tool], cwd=tmp_path, env={"GREETING": "hello", "PATH": os.defpath})

    assert result.stdout == f"{tmp_path}\nhello\n".encode()


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
def test_interrupted_caller_kills_the_group(tmp_path, make_shell_tool, exc):
    """ikigai got SIGINT/SIGTERM mid-call: the tool and its children die, the exception goes on."""
    pids = tmp_path / "pids"
    tool = make_shell_tool(tmp_path, "slow-tool", f"sleep 30 &\necho $$ $! > {pids}\nwait\n")

    def interrupt(signum, frame):
        raise exc

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    before = open_fd_count()
    start = time.monotonic()
    try:
        with pytest.raises(exc):
            run([tool], timeout=30)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    assert time.monotonic() - start < 10
    assert open_fd_count() == before
    main, grandchild = (int(pid) for pid in pids.read_text().split())
    assert not pid_alive(main)
    with pytest.raises(ChildProcessError):
        os.waitpid(main, os.WNOHANG)
    assert wait_gone(grandchild, timeout=3)


def test_terminate_until_kills_the_tools_other_threads_wait_on(tmp_path, make_shell_tool):
    """Ctrl-C in the agent loop: the main thread kills every running tool, each worker returns.

    ``terminate_until``, as the agent loop calls it: a tool can print before its worker has
    registered it (a busy machine), so one ``terminate_all`` may come too early for it."""
    script = 'sleep 30 &\necho $! > "$1.tmp"; mv "$1.tmp" "$1"\nwait\n'
    tool = make_shell_tool(tmp_path, "slow-tool", script)
    marks = [tmp_path / f"grandchild-{i}" for i in range(2)]
    results = []
    workers = [threading.Thread(target=lambda m=mark: results.append(run([tool, m], timeout=60)))
               for mark in marks]
    for worker in workers:
        worker.start()
    deadline = time.monotonic() + 10
    while not all(mark.exists() for mark in marks) and time.monotonic() < deadline:
        time.sleep(0.02)

    def finished(poll: float) -> bool:
        for worker in workers:
            worker.join(timeout=poll / len(workers))
        return not any(worker.is_alive() for worker in workers) or time.monotonic() > deadline

    deadline = time.monotonic() + 10
    terminate_until(finished)

    assert [r.exit_code for r in results] == [128 + signal.SIGKILL] * 2
    assert not any(r.timed_out for r in results)
    assert all(wait_gone(int(mark.read_text()), timeout=3) for mark in marks)


def test_python_argv_runs_without_a_shell():
    result = run([sys.executable, "-c", "import sys; sys.stdout.write(sys.stdin.read()[::-1])"],
                 stdin=b"abc")

    assert result.stdout == b"cba"


def test_a_timed_out_process_says_how_long_it_waited_for_a_processor():
    from ikigai_core.process import _cpu_wait

    ran = run_process(["sleep", "5"], stdin=None, timeout=0.2, max_stdout=1024,
                      max_stderr=1024, kill_grace=0)
    assert ran.timed_out and 0.0 <= ran.starved < 0.2  # sleeping is not waiting for a CPU
    assert _cpu_wait(os.getpid(), 0.0) >= 0.0
    assert _cpu_wait(-1, 5.0) == 0.0


@pytest.mark.parametrize("state, expected", [("R", 0.9), ("S", 0.05)])
def test_a_wait_for_a_processor_counts_before_it_ends(monkeypatch, state, expected):
    """Linux adds a wait to a process's run delay only once it gets a processor: one that has
    waited since shortly after it started, and waits still, shows almost none. Starved under
    load, such a --schema call was lost instead of asked again."""
    from ikigai_core import process

    monkeypatch.setattr(process, "_schedstat", lambda pid: (0.1, 0.05))  # ran, waited so far
    monkeypatch.setattr(process, "is_running", lambda pid: state == "R")
    assert process._cpu_wait(12345, 1.0) == pytest.approx(expected)


def test_a_caller_late_past_the_deadline_still_sees_the_child_finished(
        tmp_path, make_shell_tool, monkeypatch, exit_watch):
    """On a busy machine the calling thread may get a processor only after the deadline,
    while the child finished in time: that is no timeout (discovery under load lost tools)."""
    from types import SimpleNamespace

    from ikigai_core import process

    tool = make_shell_tool(tmp_path, "quick-tool", "echo done\n")
    start = process._Run.start

    def start_then_stall(run, data):
        start(run, data)
        os.waitid(os.P_PID, run.proc.pid, os.WEXITED | os.WNOWAIT)  # the child finishes...
        late = time.monotonic() + 60  # ...while this thread waits a minute for a processor
        monkeypatch.setattr(process, "time", SimpleNamespace(monotonic=lambda: late))

    monkeypatch.setattr(process._Run, "start", start_then_stall)
    result = run([tool], timeout=1.0)

    assert not result.timed_out and (result.exit_code, result.stdout) == (0, b"done\n")
