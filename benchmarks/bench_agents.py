"""Sub-agents (issue 25): fork latency, the parent's responsiveness, and drift over cycles.

Run on demand, from a regular install (``tox -e bench -- agents``: an editable one adds 10 ms
of import finders to every tool's start). Against a local fake OpenAI server
(pytest-ikigai's) in a process of its own, so the figures are ikigai's, not a network's:

1. fork -> the child's first provider request (target <= 150 ms), next to the baseline of
   a session's own ``send`` -> its request, measured in the same run: warm (in this
   process, after the first), and cold: the first ``/fork`` of a fresh ``ikigai chat``
   (idle at its prompt for a second, as while its user types), next to a fresh chat's
   first message -> its request, on a used home and on a new one (no tool schema cached:
   both wait for the chat's discovery);
2. 16 children at once, each making three model turns (a 20 ms reply each) and a real
   ``glob`` tool call between them: the longest stall of a 10 ms ticker standing for the
   parent's event handling (target <= 50 ms), next to the same ticker with no children,
   over ROUNDS rounds (default 10): one round says little on a shared 2-core machine;
3. CYCLES (default 1,000) fork/wait/kill cycles, every other child killed while its
   ``bash`` tool (``sleep 30``) runs: the change in open fds, threads and RSS
   from after a warm-up of ``KEEP_ENDED`` + 50 cycles (by then the tree keeps the records of
   as many ended agents as it ever will), and the processes left (target: no drift, none).

Run as ``python benchmarks/bench_agents.py [CYCLES [ROUNDS]]``.
"""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ikigai_core import App, Session
from ikigai_core.orchestration import Supervisor
from ikigai_core.orchestration.supervisor import KEEP_ENDED
from ikigai_core.workers import IDLE
from pytest_ikigai.fakeserver import FakeServer, RecordedRequest, Reply
from pytest_ikigai.replies import REPLIES

OPENAI = REPLIES["openai"]


class Model:
    """The fake server, in a process of its own (``--serve``): a model is never inside
    ikigai's process, whose heap and interpreter lock are what part 2 measures (in-process,
    its threads parsing every request and its record of them, collected by ikigai's cyclic
    collector, were a third of the stalls). Each conversation's first user message picks
    its script; the arrival of each conversation's first request is noted."""

    def __init__(self) -> None:
        self._arrived: dict[str, float] = {}
        self._noted = threading.Condition()
        self._process = subprocess.Popen([sys.executable, __file__, "--serve"], text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._process.stdout is not None
        self.url = self._process.stdout.readline().strip()
        self.pid = self._process.pid
        threading.Thread(target=self._note, args=(self._process.stdout,), daemon=True).start()

    def _note(self, lines: Any) -> None:
        for line in lines:
            prompt, _, at = line.rstrip("\n").rpartition("\t")
            with self._noted:
                self._arrived.setdefault(prompt, float(at))  # perf_counter: system-wide
                self._noted.notify_all()

    def arrival(self, prompt: str, timeout: float = 60) -> float:
        """When the first request of the conversation ``prompt`` began reached the model."""
        with self._noted:
            if not self._noted.wait_for(lambda: prompt in self._arrived, timeout):
                raise SystemExit(f"benchmark stopped: {prompt!r} never reached the model")
            return self._arrived.pop(prompt)

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait(10)


def answer(request: RecordedRequest) -> Reply:
    """The model's side (``--serve``): the reply, and the arrival noted on stdout."""
    body: Any = request.json
    messages = body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user")
    turn = sum(1 for m in messages if m["role"] == "assistant")
    if turn == 0:
        print(f"{prompt}\t{time.perf_counter()}", flush=True)
    stream = body.get("stream") is True
    if prompt.startswith("mid-tool") and turn == 0:  # killed while this runs
        return OPENAI.reply("", [("t", "bash", {"command": "sleep 30"})], stream=stream)
    if prompt.startswith("busy") and turn < 2:
        reply = OPENAI.reply("", [(f"c{turn}", "glob", {"pattern": "*.py"})], stream=stream)
        return replace(reply, wait=0.02)
    return replace(OPENAI.reply("done", stream=stream),
                   wait=0.02 if prompt.startswith("busy") else 0.0)


def serve() -> None:
    """Serve :func:`answer` until stdin closes, keeping no record of the requests."""
    def check(request: RecordedRequest) -> Reply:
        server.requests.clear()
        return answer(request)

    server = FakeServer(check=check)
    print(server.url, flush=True)
    sys.stdin.read()
    server.close()


def root(model: Model, cwd: Path) -> Session:
    """A root session talking to ``model``, its tools discovered, allowed to run them."""
    environ = {**os.environ, "OPENAI_API_KEY": "sk-bench", "OPENAI_BASE_URL": model.url}
    session = Session.open(App(environ=environ, cwd=cwd), "openai", log=False,
                           ask=lambda question: "y")
    session.tools()
    return session


def fork_latency(model: Model, cwd: Path, rounds: int = 30) -> None:
    session = root(model, cwd)
    sup = Supervisor(session, max_running=64)
    forked, direct = [], []
    for i in range(rounds):
        started = time.perf_counter()
        child = sup.fork(f"latency {i}")
        sup.wait([child], 30)
        forked.append(model.arrival(f"latency {i}") - started)
        session.clear()  # a fresh conversation, as a child's is
        started = time.perf_counter()
        session.send(f"direct {i}")
        direct.append(model.arrival(f"direct {i}") - started)
    sup.close()
    f, d = statistics.median(forked), statistics.median(direct)
    print(f"fork -> first request: median {f * 1000:.1f} ms, max {max(forked) * 1000:.1f} ms "
          f"(target <= 150 ms); baseline send -> request {d * 1000:.1f} ms; "
          f"ratio {f / d:.2f}x")


def cold_fork(model: Model, cwd: Path, rounds: int = 5, idle: float = 1.0) -> None:
    ikigai = str(Path(sys.executable).with_name("ikigai"))

    def first(line: str, prompt: str, home: str) -> float:
        """Seconds from ``line`` typed into a fresh chat on ``home``, idle at its prompt
        for ``idle`` s, to the model receiving ``prompt``."""
        environ = {**os.environ, "IKIGAI_HOME": home, "OPENAI_API_KEY": "sk-bench",
                   "OPENAI_BASE_URL": model.url, "IKIGAI_PROVIDER": "openai"}
        chat = subprocess.Popen([ikigai, "chat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, env=environ, cwd=cwd, text=True)
        assert chat.stdin is not None and chat.stdout is not None
        chat.stdin.write("/agents\n")
        chat.stdin.flush()
        chat.stdout.readline()  # its answer: the chat reads its input
        time.sleep(idle)
        started = time.perf_counter()
        chat.stdin.write(line + "\n")
        chat.stdin.flush()
        arrived = model.arrival(prompt)
        chat.communicate(timeout=60)
        return arrived - started

    def compare(what: str, home: Any) -> None:
        forked = [first(f"/fork {what} {i}", f"{what} {i}", home()) for i in range(rounds)]
        direct = [first(f"{what} first {i}", f"{what} first {i}", home()) for i in range(rounds)]
        f, d = statistics.median(forked), statistics.median(direct)
        print(f"cold, {what}: a fresh chat's first /fork -> request: median {f * 1000:.1f} ms, "
              f"max {max(forked) * 1000:.1f} ms (target <= 150 ms); baseline its first "
              f"message -> request {d * 1000:.1f} ms; ratio {f / d:.2f}x ({rounds} chats each)")

    used = os.environ["IKIGAI_HOME"]
    first("/fork a first chat", "a first chat", used)  # as after any earlier chat
    compare("a used home", lambda: used)
    with tempfile.TemporaryDirectory() as homes:  # the first chat ever: no schema cached
        compare("a new home", lambda: tempfile.mkdtemp(dir=homes))


def stalls(model: Model, cwd: Path, rounds: int, children: int = 16) -> None:
    def ticker(stop: threading.Event, worst: list[float]) -> None:
        due = time.perf_counter()
        while not stop.is_set():
            due += 0.01
            time.sleep(max(due - time.perf_counter(), 0))
            worst[0] = max(worst[0], time.perf_counter() - due)

    def measure(work: Any) -> tuple[float, float]:
        stop, worst = threading.Event(), [0.0]
        tick = threading.Thread(target=ticker, args=(stop, worst))
        tick.start()
        started = time.perf_counter()
        work()
        elapsed = time.perf_counter() - started
        stop.set()
        tick.join()
        return worst[0], elapsed

    session = root(model, cwd)
    session.warm().join(60)  # as `ikigai chat` starts: the client, genai-prices, then settle
    sup = Supervisor(session, max_running=children)

    def run_children() -> None:
        ids = [sup.fork(f"busy {i}") for i in range(children)]
        results = sup.wait(ids, 120)
        bad = [r for r in results if r.status != "done"]
        if bad:
            raise SystemExit(f"benchmark stopped: a child ended {bad[0].status}: {bad[0].error}")

    quiet, busy, took = [], [], []
    for _ in range(rounds):
        quiet.append(measure(lambda: time.sleep(1))[0] * 1000)
        worst, elapsed = measure(run_children)
        busy.append(worst * 1000)
        took.append(elapsed)
    sup.close()
    over = sum(1 for worst in busy if worst > 50)
    print(f"{children} children (3 turns, 2 glob calls each), {rounds} rounds of "
          f"{min(took):.2f}-{max(took):.2f} s: the parent's longest stall median "
          f"{statistics.median(busy):.1f} ms, max {max(busy):.1f} ms, {over}/{rounds} rounds "
          f"over 50 ms (target <= 50 ms; each round: "
          f"{', '.join(f'{worst:.0f}' for worst in sorted(busy))}); baseline with no "
          f"children median {statistics.median(quiet):.1f} ms, max {max(quiet):.1f} ms")


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def children_of_this_process() -> list[int]:
    me, found = os.getpid(), []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] not in "ZX":
            found.append(int(pid))
    return found


def drift(model: Model, cwd: Path, cycles: int) -> None:
    sup = Supervisor(root(model, cwd), max_running=4)

    def cycle(i: int) -> None:
        """Odd cycles wait for the child's answer, even ones kill it while its tool runs."""
        prompt = f"cycle {i}" if i % 2 else f"mid-tool cycle {i}"
        child = sup.fork(prompt)
        if i % 2:
            sup.wait([child], 30)
        else:
            tool_started()
        sup.kill(child)
        model.arrival(prompt)

    def tool_started(timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not set(children_of_this_process()) - {model.pid}:
            if time.monotonic() > deadline:
                raise SystemExit("benchmark stopped: a child's tool never started")
            time.sleep(0.001)

    time.sleep(IDLE * 2)  # part 2's idle tool workers end first: they are not drift
    warm_up = KEEP_ENDED + 50
    for i in range(warm_up):
        cycle(i)
    time.sleep(IDLE * 4)  # idle tool workers end: a state that comes back, as below
    fds, threads, rss = len(os.listdir("/proc/self/fd")), threading.active_count(), rss_kib()
    started = time.perf_counter()
    for i in range(warm_up, warm_up + cycles):
        cycle(i)
    elapsed = time.perf_counter() - started
    time.sleep(IDLE * 4)
    after = len(os.listdir("/proc/self/fd")), threading.active_count(), rss_kib()
    sup.close()
    print(f"{cycles} fork/wait/kill cycles (half killed mid-tool) in {elapsed:.1f} s "
          f"({elapsed / cycles * 1000:.1f} ms each): fds {after[0] - fds:+d}, "
          f"threads {after[1] - threads:+d}, RSS "
          f"{(after[2] - rss) / 1024:+.1f} MiB ({(after[2] - rss) / cycles:+.2f} KiB a cycle), "
          f"processes left {len(set(children_of_this_process()) - {model.pid})}")


def main() -> None:
    gc.freeze()  # as bin/ikigai does once the command line is imported
    cycles = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
        os.environ["IKIGAI_HOME"] = home
        cwd = Path(work)
        for n in range(20):
            (cwd / f"m{n}.py").write_text("x = 1\n")
        model = Model()
        try:
            fork_latency(model, cwd)
            cold_fork(model, cwd)
            stalls(model, cwd, rounds)
            drift(model, cwd, cycles)
        finally:
            model.close()


if __name__ == "__main__":
    serve() if sys.argv[1:] == ["--serve"] else main()
