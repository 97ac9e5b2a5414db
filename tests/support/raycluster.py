"""A Ray cluster on this machine for ``ikigai batch --ray``'s tests and benchmark: a head
that only schedules (no CPUs) and worker nodes of one CPU each, every one a
``ray start --block`` in its own session under one short temporary folder, so that
:meth:`LocalRayCluster.kill` and :meth:`LocalRayCluster.close` end a node's whole process
group and nothing is left behind. ``ray stop`` is never used: it would end every Ray
process of the machine, other people's too."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RAY = Path(sys.executable).with_name("ray")
FAST_HEALTH = {  # a dead node is noticed in about a second (Ray's default: half a minute)
    "RAY_health_check_initial_delay_ms": "5000",
    "RAY_health_check_period_ms": "1000",
    "RAY_health_check_timeout_ms": "2000",
    "RAY_health_check_failure_threshold": "3",
}

PROBE = """import ray, sys, time
ray.init(address=sys.argv[1], log_to_driver=False, logging_level="ERROR")
end = time.monotonic() + 10
while (cpus := int(ray.cluster_resources().get("CPU", 0))) != int(sys.argv[2]) and (
        time.monotonic() < end):
    time.sleep(0.1)
print(cpus)
"""
"""Connects to the cluster at ``argv[1]`` and prints its CPUs once they are ``argv[2]``, or
after 10 s: one connection polls (a Ray driver takes seconds to start)."""


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster could not start (the message says why)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalRayCluster:
    """``workers`` one-CPU nodes and a head; ``address``, ``nodes``, ``kill(i)``, ``close()``.

    :param workers: how many worker nodes.
    :param timeout: seconds the cluster may take to have every node's CPU.
    """

    def __init__(self, workers: int = 2, *, timeout: float = 90.0) -> None:
        if not RAY.exists():
            raise RayUnavailable(f"Ray is not installed ({RAY} missing): "
                                 "pip install 'ikigai-core[ray]'")
        self.temp = Path(tempfile.mkdtemp(prefix="ikray-", dir="/tmp"))  # socket paths: short
        self.env = {**os.environ, **FAST_HEALTH, "RAY_USAGE_STATS_ENABLED": "0"}
        self.head: subprocess.Popen[bytes] | None = None
        self.nodes: list[subprocess.Popen[bytes]] = []
        self.logs: list[Path] = []
        port = free_port()
        self.address = f"127.0.0.1:{port}"
        try:
            self.head = self._start("--head", f"--port={port}", "--num-cpus=0",
                                    "--include-dashboard=false",
                                    f"--temp-dir={self.temp}")
            self._wait_for_cpus(0, timeout)  # a node started before the head gives up
            for count in range(1, workers + 1):  # one by one: Ray gives a node 30 s to start
                self._add_node(count, timeout)
        except BaseException:
            self.close()
            raise

    def _add_node(self, count: int, timeout: float) -> None:
        """Start a worker node and wait until the cluster has ``count`` CPUs; on a busy
        machine a node may time out starting: it is started once more."""
        for attempt in (1, 2):
            self.nodes.append(self._start(f"--address={self.address}", "--num-cpus=1"))
            try:
                self._wait_for_cpus(count, timeout)
                return
            except RayUnavailable:
                if attempt == 2 or self.nodes[-1].poll() is None:
                    raise
                _end(self.nodes.pop())  # what it started, if anything, goes with it
                self.logs.pop()

    def _start(self, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.temp / f"node-{len(self.logs)}.log", "wb")
        self.logs.append(Path(log.name))
        with log:
            return subprocess.Popen(
                [str(RAY), "start", "--block", "--disable-usage-stats",
                 f"--metrics-export-port={free_port()}",
                 f"--dashboard-agent-listen-port={free_port()}",
                 f"--dashboard-agent-grpc-port={free_port()}",
                 f"--runtime-env-agent-port={free_port()}", *args],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                start_new_session=True)

    def _wait_for_cpus(self, cpus: int, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for process, log in zip((self.head, *self.nodes), self.logs, strict=True):
                if process is not None and process.poll() is not None:
                    raise RayUnavailable(f"a Ray node exited with {process.returncode}: "
                                         f"{self.log_tail(log)}")
            try:
                seen = subprocess.run([sys.executable, "-c", PROBE, self.address, str(cpus)],
                                      capture_output=True, text=True, env=self.env,
                                      timeout=min(30.0, max(1.0, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                continue
            if seen.stdout.strip() == str(cpus):
                return
            time.sleep(0.5)
        raise RayUnavailable(f"the Ray cluster did not get {cpus} CPUs in {timeout:.0f} s: "
                             f"{self.log_tail(self.logs[-1])}")

    @staticmethod
    def log_tail(log: Path) -> str:
        """The last lines a node printed (the error, where there is one)."""
        text = log.read_text(errors="replace").strip().splitlines()
        errors = [i for i, line in enumerate(text) if "Error" in line or "Exception" in line]
        return " | ".join(text[errors[-1]:][:3] if errors else text[-3:])

    def kill(self, index: int) -> None:
        """Kill worker node ``index`` at once, with every process it started."""
        _end(self.nodes[index])

    def close(self) -> None:
        """Kill every node's process group and remove the folder (SIGTERM would make each
        node drain for up to 30 s; this cluster holds nothing worth draining)."""
        for process in (*self.nodes, self.head):
            if process is not None:
                _end(process)
        shutil.rmtree(self.temp, ignore_errors=True)


def _end(process: subprocess.Popen[bytes]) -> None:
    """Kill ``process``'s whole group (every process of that node) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
