"""Gemini keeps free-form object properties (issue 22): a map (pydantic's ``dict[str, X]``,
zod's ``z.record``) or an object of any keys goes in ``parametersJsonSchema``, which takes
``additionalProperties``, through the real ``ikigai`` and the fake Gemini server, which
refuses what the API's documented rules refuse (tests/support/api_rules.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.corpus import CORPUS
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
CASES = {
    "pyd_create_order": ("pydantic_v2", "PlaceOrder", ["metadata", "quantities"]),
    "ticket": ("pydantic_v2", "Ticket", ["extra"]),
    "zod_search_issues": ("zod_to_json_schema", "search_issues", ["extra"]),
    "freeform": ("json_schema_2020_12", "freeform", ["env", "meta"]),
}
"""Tool name: the corpus file and schema, and its free-form properties (the issue's four)."""


def parameters(name: str) -> dict:
    corpus_file, key, _ = CASES[name]
    return json.loads((CORPUS / f"{corpus_file}.json").read_text())["schemas"][key]


@pytest.fixture
def free_form_tools(make_tool, isolated_home):
    """The four as user tools; each answers with the arguments it got."""
    for name in CASES:
        make_tool(isolated_home / "tools", f"{name.replace('_', '-')}-tool", schema={
            "name": name, "description": f"The {name} tool", "parameters": parameters(name)})


def ikigai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([IKIGAI, *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tool_check_for_google_shows_every_property_kept(name, free_form_tools):
    done = ikigai("tool", "check", name, "--provider", "google", "--json")
    assert done.returncode == 0, done.stderr
    google = json.loads(done.stdout)["providers"]["google"]
    sent = google["declaration"]["parametersJsonSchema"]
    assert list(sent["properties"]) == list(parameters(name)["properties"])
    for free in CASES[name][2]:
        assert "object" in json.dumps(sent["properties"][free]), free
    assert google["changes"][0].startswith("sent as parametersJsonSchema: ")
    assert not any("left out" in change for change in google["changes"])


def test_ask_offers_the_map_and_the_tool_gets_it(free_form_tools, approve_all, fake_server,
                                                 monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", fake_server.url)
    arguments = {"items": [{"sku": "ABC-1", "quantity": 2, "price": 1.5}],
                 "metadata": {"team": "core"}}
    replies = REPLIES["google"]
    fake_server.push(replies.reply(calls=[("c1", "pyd_create_order", arguments)], stream=True),
                     replies.reply("Ordered.", stream=True))
    done = ikigai("ask", "--provider", "google", "order two")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Ordered.\n"
    assert "left out" not in done.stderr
    [tools] = fake_server.requests[0].json["tools"]
    declared = {d["name"]: d for d in tools["functionDeclarations"]}["pyd_create_order"]
    assert declared["parametersJsonSchema"]["properties"]["metadata"]["additionalProperties"] \
        == {"type": "string"}
    [result] = fake_server.requests[1].json["contents"][-1]["parts"]
    assert result["functionResponse"]["response"]["result"]["args"] == arguments


def test_the_fake_server_refuses_what_gemini_refuses(fake_server):
    """The check is real: a declaration against the documented rules gets Gemini's 400."""
    import httpx

    body = {"contents": [], "tools": [{"functionDeclarations": [{
        "name": "t", "description": "d", "parameters": {
            "type": "object", "properties": {"m": {"type": "object",
                                                   "additionalProperties": True}}}}]}]}
    answer = httpx.post(f"{fake_server.url}/v1beta/models/m:generateContent", json=body,
                        timeout=10)
    assert answer.status_code == 400
    assert answer.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "not a Schema field: additionalProperties" in answer.json()["error"]["message"]
