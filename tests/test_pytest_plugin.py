"""pytest-ikigai's fixtures, used as a tool author uses them: real tool processes through the
real executor, a whole `ikigai ask` subprocess played by the fake model on each wire."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ikigai.model import WIRE, FakeModel
from tests.support.cli import run
from tests.support.tools import write_tool

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
SHOUT = f'''#!{sys.executable}
from ikigai_toolkit import tool
@tool
def shout(text: str) -> str:
    """Shout TEXT back in capitals."""
    return text.upper()
'''


def write_shout(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "shout-tool"
    path.write_text(SHOUT)
    path.chmod(0o755)
    return path


@pytest.mark.parametrize(("provider", "wire"), [*((p, None) for p in WIRE),
                                               ("openai", "responses")])
@pytest.mark.parametrize("stream", [False, True])
def test_a_whole_ask_runs_offline_on_each_wire(provider, wire, stream, fake_model, ikigai_home,
                                               ikigai_approve_all, tmp_path):
    """Each wire, streamed and not; one case as a tool author's test runs it, a real
    ``ikigai`` process, the others in this process (the same wire, cheaper)."""
    write_shout(ikigai_home / "tools")
    model = fake_model([[("shout", {"text": "hi"})], "It says HI."], provider=provider,
                       wire=wire)
    ran = run("ask", "--tools", "shout", "shout hi", *([] if stream else ["--json"]),
              cwd=tmp_path, real=(provider, wire, stream) == ("openai", None, True))
    assert ran.returncode == 0, ran.stderr
    answer = ran.stdout if stream else json.loads(ran.stdout)["text"]
    assert answer.strip() == "It says HI."
    first, second = model.requests
    assert first.path.endswith("/responses") == (wire == "responses")
    assert "shout" in json.dumps(first.json)
    assert '\\"output\\": \\"HI\\"' in json.dumps(second.json) or '"output": "HI"' in json.dumps(
        second.json)


def test_past_the_script_the_model_answers_500(fake_model, tmp_path):
    fake_model(["Only answer."])
    first = subprocess.run([IKIGAI, "ask", "--no-tools", "one"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert first.stdout.strip() == "Only answer.", first.stderr
    second = subprocess.run([IKIGAI, "ask", "--no-tools", "two"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert second.returncode == 1
    assert "no scripted reply left" in second.stderr


def test_an_unknown_wire_is_refused():
    with pytest.raises(ValueError, match="unknown provider 'openai-responses'; use one of"):
        FakeModel([], provider="openai-responses")
    with pytest.raises(ValueError, match="wire 'responses' is not one of anthropic's"):
        FakeModel([], provider="anthropic", wire="responses")


def test_the_model_refuses_what_the_real_api_would(fake_model, tmp_path):
    """The API's rules come with the script: a request the API would refuse is its 400."""
    import httpx

    model = fake_model(["Fine."], provider="anthropic")
    thinking = {"model": "m", "max_tokens": 2000, "messages": [],
                "thinking": {"type": "enabled", "budget_tokens": 4000}}
    refused = httpx.post(model.url + "/v1/messages", json=thinking, timeout=10)
    assert refused.status_code == 400
    assert "`max_tokens` must be greater than `thinking.budget_tokens`" in refused.text
    bad_tool = {"model": "m", "max_tokens": 10, "messages": [], "tools": [
        {"name": "t", "description": "d", "input_schema": {"type": "nope"}}]}
    assert httpx.post(model.url + "/v1/messages", json=bad_tool, timeout=10).status_code == 400
    fine = httpx.post(model.url + "/v1/messages", json={**thinking, "max_tokens": 9000},
                      timeout=10)
    assert fine.json()["content"][0]["text"] == "Fine."  # refusals did not use the script


def test_without_approval_the_models_call_is_denied(fake_model, ikigai_home, tmp_path):
    write_shout(ikigai_home / "tools")
    model = fake_model([[("shout", {"text": "hi"})], "Denied, then."])
    ran = subprocess.run([IKIGAI, "ask", "--tools", "shout", "shout hi"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert ran.stdout.strip() == "Denied, then."
    assert "was denied" in json.dumps(model.requests[1].json)


def test_ikigai_tool_by_name_and_by_path(ikigai_tool, ikigai_home, tmp_path):
    write_shout(ikigai_home / "tools")
    by_name = ikigai_tool("shout")
    assert by_name.tool.source == "user"
    assert by_name({"text": "a"}) == {"tool_success": True, "result": {"output": "A"}}
    by_path = ikigai_tool(write_shout(tmp_path / "elsewhere"))
    assert by_path.tool.source == "pytest"
    assert by_path.schema["description"] == "Shout TEXT back in capitals."
    assert by_path({"text": 5})["error_code"] == "INVALID_PARAMS"


def test_a_broken_tool_is_a_lookup_error_saying_why(ikigai_tool, tmp_path):
    broken = write_tool(tmp_path, "broken-tool", schema="not json")
    with pytest.raises(LookupError, match=r"broken: .*not valid JSON"):
        ikigai_tool(broken)
    with pytest.raises(LookupError, match="no tool 'nothing'"):
        ikigai_tool("nothing")


def test_assert_portable_names_the_provider_that_refuses(assert_portable, ikigai_tool, tmp_path):
    assert_portable(ikigai_tool(write_shout(tmp_path)))
    odata = write_tool(tmp_path, "odata-tool", schema={
        "name": "odata", "description": "OData", "parameters": {
            "type": "object", "properties": {"$top": {"type": "integer"}}}})
    with pytest.raises(AssertionError, match=r"tool 'odata' is left out by anthropic: property "
                                             r"names must be 1-64"):
        assert_portable(odata)


def test_the_sandbox_toggle_runs_the_tool_under_bubblewrap(ikigai_sandbox, ikigai_tool,
                                                           tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ikigai_sandbox("read-only")
    envelope = ikigai_tool("bash")({"command": "touch made-here; echo $?"})
    assert envelope["tool_success"], envelope
    assert not (tmp_path / "made-here").exists()
    assert envelope["result"]["output"].endswith("1")
    ikigai_sandbox("off")
    assert ikigai_tool("bash")({"command": "touch made-here"})["tool_success"]
    assert (tmp_path / "made-here").exists()
