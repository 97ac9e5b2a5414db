"""`ikigai batch` on local worker processes against a fake model that answers every task
from its own request (issue 28): the tasks checked first, results appended once each, a
rerun resuming, a killed worker's task run again and said so."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ikigai_core.app import App
from ikigai_core.batch import run_batch
from ikigai_core.batch_pool import LocalPool
from ikigai_core.batch_results import ResultsFile
from ikigai_core.batch_tasks import read_tasks
from ikigai_core.batch_worker import run_task
from ikigai_core.cli import cli
from ikigai_core.errors import UsageError
from tests.support.echo_model import EchoModel

KILL_MY_WORKER = "kill -9 $(ps -o ppid= -p $PPID)"
"""A bash command killing the worker process running the task (the bash tool's parent)."""


@pytest.fixture
def model(isolated_home, monkeypatch):
    server = EchoModel()
    for name, value in server.environ.items():
        monkeypatch.setenv(name, value)
    yield server
    server.close()


def write_tasks(path: Path, *tasks: dict | str) -> Path:
    path.write_text("".join((t if isinstance(t, str) else json.dumps(t)) + "\n" for t in tasks))
    return path


def batch(*args: str, cwd: Path) -> Result:
    """``ikigai batch ARGS`` in this process (so the coverage gate sees the command), in
    ``cwd``; the workers are processes all the same."""
    here = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, ["batch", *args], catch_exceptions=False)
    finally:
        os.chdir(here)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_every_malformed_line_is_one_line_and_nothing_runs(model, tmp_path):
    write_tasks(tmp_path / "tasks.jsonl",
                {"id": "ok", "prompt": "hi"},
                "not json",
                '["a list"]',
                {"id": "ok", "prompt": "again"},
                {"prompt": "no id"},
                {"id": "../up", "prompt": "hi"},
                {"id": "p", "prompt": "hi", "promt": "typo"},
                {"id": "c", "prompt": "hi", "cwd": "missing-folder"},
                {"id": "t", "prompt": "hi", "tools": "bash"},
                {"id": "a", "prompt": "hi", "allow": [":x"]})
    done = batch("tasks.jsonl", cwd=tmp_path)
    assert done.exit_code == 2
    said = done.stderr.splitlines()
    assert [line.split(": ", 2)[1] for line in said[:-1]] == [
        f"tasks.jsonl:{n}" for n in range(2, 11)]
    assert "not JSON" in said[0] and "not an object" in said[1]
    assert "id 'ok' is on line 1 too" in said[2] and "id is missing" in said[3]
    assert "did you mean 'prompt'" in said[5] and "not a folder" in said[6]
    assert said[-1] == "ikigai: nothing was run; fix the tasks file"
    assert model.asked == {}
    assert not (tmp_path / "tasks.results.jsonl").exists()


def test_an_unusable_provider_or_an_unknown_agent_stops_the_batch_first(model, tmp_path):
    write_tasks(tmp_path / "tasks.jsonl", {"id": "a", "prompt": "hi", "provider": "nope"},
                {"id": "b", "prompt": "hi", "agent": "reviewer"},
                {"id": "c", "prompt": "hi", "budget": {"tokens": -1}})
    done = batch("tasks.jsonl", cwd=tmp_path)
    assert done.exit_code == 2
    said = done.stderr.splitlines()
    assert "tasks.jsonl:3: budget.tokens must be a positive integer, got -1" in said[0]
    assert "nothing was run" in said[1]
    write_tasks(tmp_path / "tasks.jsonl", {"id": "a", "prompt": "hi", "provider": "nope"},
                {"id": "b", "prompt": "hi", "agent": "reviewer"})
    said = batch("tasks.jsonl", cwd=tmp_path).stderr.splitlines()
    assert said[0].startswith("ikigai: tasks.jsonl:1: Unknown provider 'nope'")
    assert said[1] == "ikigai: tasks.jsonl:2: unknown agent 'reviewer'"
    assert model.asked == {}


def test_a_task_runs_as_its_agent_and_within_its_budget(model, isolated_home, tmp_path):
    """An agent definition gives the task its system prompt, model and tools; the task's
    budget stops it at its limit, what was answered kept (issue 26's Budget)."""
    agents = isolated_home / "agents"
    agents.mkdir()
    (agents / "echoer.md").write_text("---\ndescription: Echoes.\nmodel: echo-model\n"
                                      "tools: [bash]\n---\nYou are the echoer.\n")
    write_tasks(tmp_path / "tasks.jsonl",
                {"id": "agent", "prompt": "hello", "agent": "echoer"},
                {"id": "capped", "prompt": "bash: echo hi", "allow": ["bash"],
                 "budget": {"turns": 1}})
    done = batch("tasks.jsonl", "--workers", "1", cwd=tmp_path)
    assert done.exit_code == 1, done.stderr
    results = {r["id"]: r for r in lines(tmp_path / "tasks.results.jsonl")}
    assert results["agent"]["text"] == "echo: hello"
    assert results["agent"]["model"] == "echo-model"
    sent = next(r.json for r in model.server.requests if r.json["messages"][-1]["content"] == "hello")
    assert sent["model"] == "echo-model" and "You are the echoer." in sent["messages"][0]["content"]
    assert [t["function"]["name"] for t in sent["tools"]] == ["bash"]
    capped = results["capped"]
    assert capped["status"] == "over_budget" and capped["limit"] == "turns"
    assert capped["tool_calls"][0]["error_code"] == "BUDGET_EXCEEDED"  # not run past it
    assert capped["session"] and capped["usage"]["input_tokens"] == 10
    assert "task capped failed: " in done.stderr


def test_tasks_run_on_workers_and_each_result_is_one_line(model, tmp_path):
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "data.txt").write_text("from the seed\n")
    write_tasks(tmp_path / "tasks.jsonl",
                *({"id": f"t{i}", "prompt": f"hello {i}"} for i in range(4)),
                {"id": "allowed", "prompt": "bash: cat data.txt && touch made", "cwd": "seed",
                 "allow": ["bash:/command~^cat "]},
                {"id": "denied", "prompt": "bash: touch made"},
                {"id": "broken", "prompt": "fail"})
    done = batch("tasks.jsonl", "--workers", "2", cwd=tmp_path)
    assert done.exit_code == 1, done.stderr
    assert done.stdout == "6 done, 1 failed; results in tasks.results.jsonl\n"
    assert "task broken failed: Provider 'openai' rejected the request (HTTP 400)" in done.stderr
    results = {r["id"]: r for r in lines(tmp_path / "tasks.results.jsonl")}
    assert sorted(results) == ["allowed", "broken", "denied", "t0", "t1", "t2", "t3"]
    assert results["t2"]["text"] == "echo: hello 2" and results["t2"]["status"] == "done"
    assert results["t2"]["usage"] == {"input_tokens": 10, "output_tokens": 5,
                                      "cache_read_tokens": 0, "cache_write_tokens": 0}
    assert results["t2"]["cost"] > 0  # gpt-4o-mini has a price
    assert results["t2"]["attempts"] == 1 and results["t2"]["session"]
    assert results["allowed"]["text"] == "ran: from the seed"
    assert results["allowed"]["tool_calls"] == [{"name": "bash", "ok": True}]
    assert results["denied"]["tool_calls"][0]["error_code"] == "TOOL_DENIED"
    notice = results["denied"]["notices"][0]
    assert "bash was not run: it needs approval" in notice
    assert notice.endswith("; run again with --allow bash or the task's \"allow\": "
                           "[\"bash\"], or add a rule: ikigai permissions allow bash")
    assert results["broken"]["status"] == "failed" and results["broken"]["session"] is None
    assert not (seed / "made").exists()  # the task worked on its own copy
    assert model.asked["hello 0"] == 1


def test_a_rerun_skips_finished_tasks_and_a_cut_short_line_runs_again(model, tmp_path):
    tasks = write_tasks(tmp_path / "tasks.jsonl",
                        *({"id": f"t{i}", "prompt": f"hello {i}"} for i in range(3)))
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "t0", "status": "done"}) + "\n" + '{"id": "t1", "sta')
    done = batch(str(tasks), "--out", str(out), "--workers", "1", cwd=tmp_path)
    assert done.exit_code == 0, done.stderr
    assert "dropped its last line, cut short" in done.stderr
    assert done.stdout.startswith("2 done, 0 failed, 1 skipped (finished before)")
    assert [r["id"] for r in lines(out)] == ["t0", "t1", "t2"]
    assert model.asked == {"hello 1": 1, "hello 2": 1}
    again = batch(str(tasks), "--out", str(out), cwd=tmp_path)
    assert again.stdout.startswith("0 done, 0 failed, 3 skipped") and len(lines(out)) == 3


def test_a_results_file_that_is_not_one_is_refused(model, tmp_path):
    write_tasks(tmp_path / "tasks.jsonl", {"id": "t", "prompt": "hi"})
    (tmp_path / "tasks.results.jsonl").write_text('{"id": "t"}\nhello\n{"no": "id"}\n')
    done = batch("tasks.jsonl", cwd=tmp_path)
    assert done.exit_code == 2
    assert done.stderr.splitlines() == [
        "ikigai: tasks.results.jsonl:2: not a JSON line",
        "ikigai: tasks.results.jsonl:3: not a result (no task id)",
        "ikigai: this is not an ikigai batch results file; pass --out with another file"]
    assert model.asked == {}


def test_two_batches_cannot_write_one_results_file(tmp_path):
    first = ResultsFile(tmp_path / "r.jsonl")
    try:
        with pytest.raises(UsageError, match="another ikigai batch is writing"):
            ResultsFile(tmp_path / "r.jsonl")
    finally:
        first.close()


class Events:
    """The coordinator's events, and the pool, so a test can act on a running task."""

    def __init__(self):
        self.results = []

    def started(self, task):
        pass

    def finished(self, result):
        self.results.append(result)


def test_a_killed_workers_task_runs_once_more_and_says_so(model, tmp_path):
    """The worker running `once` is killed (by the task itself, the first time): the task
    is started again on a new worker and its line says so; a task killing every worker
    fails after its second attempt; the other tasks finish once each."""
    marker = tmp_path / "killed-once"
    write_tasks(tmp_path / "tasks.jsonl",
                {"id": "once", "prompt": f"bash: test -e {marker} && echo survived || "
                                         f"{{ touch {marker}; {KILL_MY_WORKER}; }}"},
                {"id": "always", "prompt": f"bash: {KILL_MY_WORKER}"},
                *({"id": f"t{i}", "prompt": f"hello {i}"} for i in range(3)))
    tasks = read_tasks(tmp_path / "tasks.jsonl")
    results = ResultsFile(tmp_path / "out.jsonl")
    pool = LocalPool(2, {"allow": ["bash"], "environ": {}, "work": None})
    events = Events()
    try:
        run_batch(tasks, results, pool, events, poll=0.1)
    finally:
        pool.close()
        results.close()
    assert not any(w.process.is_alive() for w in pool.workers)
    written = {r["id"]: r for r in lines(tmp_path / "out.jsonl")}
    assert len(written) == 5 and written == {r["id"]: r for r in events.results}
    once = written["once"]
    assert once["status"] == "done" and once["text"] == "ran: survived"
    assert once["attempts"] == 2
    assert once["worker_deaths"] == [once["worker_deaths"][0]]
    assert once["worker_deaths"][0].endswith("was killed by signal 9")
    always = written["always"]
    assert always["status"] == "failed" and always["attempts"] == 2
    assert always["error"].startswith("its worker died 2 times; last: worker process")
    assert all(written[f"t{i}"]["attempts"] == 1 for i in range(3))


def test_a_task_runs_in_this_process_as_a_worker_runs_it(model, tmp_path):
    """run_task, the worker's whole job, in this process: the work folder kept under
    --work, the result's fields; a folder that cannot be made fails the task."""
    (tmp_path / "seed").mkdir()
    (tmp_path / "seed" / "f.txt").write_text("x")
    task = read_tasks(write_tasks(tmp_path / "t.jsonl", {"id": "w", "prompt": "bash: ls",
                                                         "cwd": "seed", "tools": ["bash"]}))[0]
    keep = tmp_path / "work"
    result = run_task(task.to_json(), {"allow": ["bash"], "environ": {}, "work": str(keep)})
    assert result["text"] == "ran: f.txt" and result["work"] == str(keep / "w")
    assert (keep / "w" / "f.txt").exists()
    (tmp_path / "blocked").write_text("a file, not a folder")
    failed = run_task(task.to_json(), {"work": str(tmp_path / "blocked")})
    assert failed["status"] == "failed"
    assert failed["error"].startswith("cannot make the task's work folder")
    none = run_task({**task.to_json(), "tools": []}, {"allow": ["bash"], "work": None})
    assert none["tool_calls"][0]["error_code"] == "TOOL_NOT_FOUND"


def test_forwarded_environment_holds_settings_and_provider_variables(model, monkeypatch):
    from ikigai_core.batch import forwarded_environ

    monkeypatch.setenv("UNRELATED", "x")
    sent = forwarded_environ(App())
    assert sent["OPENAI_BASE_URL"] == model.url and sent["IKIGAI_PROVIDER"] == "openai"
    assert "UNRELATED" not in sent and "PATH" not in sent
    assert os.environ["IKIGAI_HOME"] == sent["IKIGAI_HOME"]


def test_on_a_terminal_a_progress_bar_counts_done_failed_running_and_tokens(model, tmp_path):
    """On a real terminal (pty, drawn by pyte): the bar, the counts while tasks run, the
    failed task's line above it, and the summary."""
    from tests.support.vt import Screen

    write_tasks(tmp_path / "tasks.jsonl", {"id": "slow", "prompt": "sleep: 6 slow one"},
                {"id": "broken", "prompt": "fail"},
                *({"id": f"t{i}", "prompt": f"hello {i}"} for i in range(2)))
    ikigai = str(Path(sys.executable).with_name("ikigai"))
    with Screen([ikigai, "batch", "tasks.jsonl", "--workers", "2"], env=dict(os.environ),
                cwd=tmp_path) as screen:
        running = screen.wait_for("running 1  tokens 30", timeout=60)
        assert "ikigai: task broken failed: Provider 'openai' rejected" in running
        assert "2/4" in running or "3/4" in running
        assert screen.wait(60) == 1
    final = screen.text
    assert "4/4" in final and "done 3  failed 1  running 0  tokens 45" in final
    assert "3 done, 1 failed; results in tasks.results.jsonl" in final


def test_a_ray_address_nobody_answers_on_is_one_line_at_once(model, tmp_path):
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'ikigai-core[ray]'")
    from pytest_ikigai.fakeserver import unused_url

    write_tasks(tmp_path / "tasks.jsonl", {"id": "t", "prompt": "hi"})
    address = unused_url().removeprefix("http://")
    done = batch("tasks.jsonl", "--ray", address, cwd=tmp_path)
    assert done.exit_code == 2
    assert done.stderr == (f"ikigai: cannot connect to the Ray cluster at {address}: "
                           "Connection refused; start one with `ray start --head`, or pass "
                           "its address\n")
    assert batch("tasks.jsonl", "--ray", address, "--workers", "2",
                 cwd=tmp_path).stderr.startswith("ikigai: --workers and --ray exclude")
    assert model.asked == {} and not (tmp_path / "tasks.results.jsonl").exists()


def test_a_killed_coordinators_workers_stop_and_kill_their_tools(model, tmp_path):
    """``ikigai batch`` SIGKILLed mid-task: its worker sees it gone, unwinds as on SIGTERM
    and kills the task's tool; nothing runs on."""
    import signal
    import subprocess

    from tests.support.procs import pid_written, processes, wait_gone

    pid = tmp_path / "pid"
    write_tasks(tmp_path / "tasks.jsonl",
                {"id": "slow", "prompt": f"bash: echo $$ > {pid}; exec sleep 60"})
    coordinator = subprocess.Popen(
        [str(Path(sys.executable).with_name("ikigai")), "batch", "tasks.jsonl",
         "--workers", "1", "--allow", "bash"], cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tool = worker = pid_written(pid)
    parent_of = {child: parent for child, _, parent, _ in processes()}
    while parent_of[worker] != coordinator.pid:  # up the tree: the bash tool, the worker
        worker = parent_of[worker]
    coordinator.send_signal(signal.SIGKILL)
    coordinator.wait(10)
    assert wait_gone(tool, timeout=10), "the task's tool outlived its batch"
    assert wait_gone(worker, timeout=10), "the worker outlived its coordinator"


def test_a_killed_workers_tools_are_killed_with_it(model, tmp_path):
    """The worker is SIGKILLed while its task's tool has a process running: the worker's
    watcher kills it; the task runs again and finishes."""
    from tests.support.procs import pid_written, wait_gone

    marker, pid = tmp_path / "killed-once", tmp_path / "pid"
    write_tasks(tmp_path / "tasks.jsonl",
                {"id": "once", "prompt": f"bash: test -e {marker} && echo survived || "
                                         f"{{ touch {marker}; sleep 60 & echo $! > {pid}; "
                                         f"{KILL_MY_WORKER}; }}"})
    results = ResultsFile(tmp_path / "out.jsonl")
    pool = LocalPool(1, {"allow": ["bash"], "environ": {}, "work": None})
    try:
        run_batch(read_tasks(tmp_path / "tasks.jsonl"), results, pool, Events(), poll=0.1)
    finally:
        pool.close()
        results.close()
    [once] = lines(tmp_path / "out.jsonl")
    assert (once["status"], once["attempts"]) == ("done", 2)
    assert wait_gone(pid_written(pid), timeout=10), "the killed worker's tool ran on"
