"""`ikigai batch --ray` on a Ray cluster this module starts on this machine — a head and two
one-CPU worker nodes, torn down after, nothing left running (issue 28): 50 tasks finished
exactly once, as a local `--workers` run finishes them; a worker node killed mid-run and
its task finished on the other. Skipped, with Ray's reason, where the cluster cannot start.
One test, so that one xdist worker starts one cluster (pytest-xdist 3.8's `loadgroup` did
not keep two tests on one worker here), in two steps."""

from __future__ import annotations

import json
import threading
import time

import pytest

from ikigai_core.app import App
from ikigai_core.batch import forwarded_environ, run_batch
from ikigai_core.batch_results import ResultsFile
from ikigai_core.batch_tasks import read_tasks
from tests.support.raycluster import LocalRayCluster, RayUnavailable
from tests.test_batch import Events, batch, lines, model, write_tasks

__all__ = ["model"]  # the fixture, used by name

pytest.importorskip("ray", reason="Ray is not installed: pip install 'ikigai-core[ray]'")


@pytest.fixture(scope="module")
def cluster():
    try:
        started = LocalRayCluster(2)
    except RayUnavailable as exc:
        pytest.skip(f"a local Ray cluster cannot start here: {exc}")
    yield started
    started.close()


def outcome(result: dict) -> tuple:
    """What a run decides about a task (not where or when it ran)."""
    return (result["status"], result["text"], result["error"], result["usage"],
            result["tool_calls"], result["attempts"])


def fifty_tasks_finish_exactly_once_and_as_on_local_workers(cluster, model, tmp_path):
    """50 tasks, each finished once, with the outcomes of a `--workers 2` run; a rerun skips all."""
    tasks = [{"id": f"t{i:02}", "prompt": f"hello {i}"} for i in range(45)]
    tasks += [{"id": f"b{i}", "prompt": f"bash: echo {i}", "allow": ["bash"]} for i in range(3)]
    tasks += [{"id": "denied", "prompt": "bash: echo no"}, {"id": "broken", "prompt": "fail"}]
    write_tasks(tmp_path / "tasks.jsonl", *tasks)
    on_ray = batch("tasks.jsonl", "--ray", cluster.address, "--out", "ray.jsonl", cwd=tmp_path)
    assert on_ray.exit_code == 1, on_ray.stderr  # the task "broken" failed
    assert on_ray.stdout == "49 done, 1 failed; results in ray.jsonl\n"
    ray_results = lines(tmp_path / "ray.jsonl")
    assert sorted(r["id"] for r in ray_results) == sorted(t["id"] for t in tasks)
    assert set(model.asked.values()) == {1}  # no task was started twice
    assert {r["id"]: r["text"] for r in ray_results}["b2"] == "ran: 2"
    local = batch("tasks.jsonl", "--workers", "2", "--out", "local.jsonl", cwd=tmp_path)
    assert local.exit_code == 1
    assert ({r["id"]: outcome(r) for r in ray_results}
            == {r["id"]: outcome(r) for r in lines(tmp_path / "local.jsonl")})
    again = batch("tasks.jsonl", "--ray", cluster.address, "--out", "ray.jsonl", cwd=tmp_path)
    assert again.stdout.startswith("0 done, 0 failed, 50 skipped")


def a_killed_worker_nodes_task_finishes_on_the_other(cluster, model, tmp_path, capfd):
    """Node 0 is killed while both nodes run a task: its task is started once more, on node
    1, and its line says so; every task has one line; Ray's "(raylet) ... marked dead" is
    not on stdout, the results' channel. (Last: it leaves one node.)"""
    write_tasks(tmp_path / "tasks.jsonl",
                *({"id": f"s{i}", "prompt": f"sleep: 2 hello {i}"} for i in range(4)))
    tasks = read_tasks(tmp_path / "tasks.jsonl")

    def kill_when_both_run():
        deadline = time.monotonic() + 60
        while sum(model.asked.values()) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        cluster.kill(0)

    from ikigai_core.batch_ray import RayCluster

    killer = threading.Thread(target=kill_when_both_run, daemon=True)
    results = ResultsFile(tmp_path / "out.jsonl")
    workers = RayCluster(cluster.address, {"allow": [], "environ": forwarded_environ(App()),
                                           "work": None})
    events = Events()
    capfd.readouterr()
    killer.start()
    try:
        run_batch(tasks, results, workers, events, poll=0.1)
    finally:
        workers.close()
        results.close()
        killer.join(60)
    assert capfd.readouterr().out == ""  # the core prints nothing; nor may Ray
    written = lines(tmp_path / "out.jsonl")
    assert sorted(r["id"] for r in written) == ["s0", "s1", "s2", "s3"]
    assert all(r["status"] == "done" for r in written), json.dumps(written)
    retried = [r for r in written if r["attempts"] == 2]
    assert len(retried) == 1, json.dumps(written)
    assert len(retried[0]["worker_deaths"]) == 1
    assert model.asked[f"sleep: 2 {retried[0]['text'].removeprefix('echo: ')}"] == 2


@pytest.mark.timeout(360)  # with the cluster's start: 75 s at load 8 on 2 cores, 150 s at 20
def test_on_a_local_ray_cluster(cluster, model, tmp_path, capfd):
    fifty = tmp_path / "fifty"
    fifty.mkdir()
    fifty_tasks_finish_exactly_once_and_as_on_local_workers(cluster, model, fifty)
    model.asked.clear()
    killed = tmp_path / "killed"
    killed.mkdir()
    a_killed_worker_nodes_task_finishes_on_the_other(cluster, model, killed, capfd)
