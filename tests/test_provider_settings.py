"""A provider's own settings in config.json (issue 26 §1 leftovers): ``providers.openai.wire``
chooses the OpenAI wire like ``OPENAI_WIRE`` (the variable wins), ``ikigai request`` prints
the body of the wire chosen, and a key a provider does not take is one line naming it."""

from __future__ import annotations

import json

import pytest

from tests.test_sessions import invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)


def _config(home, providers):
    (home / "config.json").write_text(json.dumps({"providers": providers}))


def test_the_wire_setting_chooses_the_body_ikigai_request_prints(isolated_home, monkeypatch):
    _config(isolated_home, {"openai": {"wire": "responses"}})
    body = json.loads(invoke("request", "--provider", "openai", "--no-tools", "hi").stdout)
    assert body["store"] is False and body["input"][-1] == {"role": "user", "content": "hi"}
    assert body["prompt_cache_key"].startswith("ikigai-")

    monkeypatch.setenv("OPENAI_WIRE", "chat")  # the variable wins
    body = json.loads(invoke("request", "--provider", "openai", "--no-tools", "hi").stdout)
    assert body["messages"][-1] == {"role": "user", "content": "hi"} and "input" not in body


def test_the_cache_ttl_setting_reaches_the_request(isolated_home):
    _config(isolated_home, {"anthropic": {"cache_ttl": "1h"}})
    body = json.loads(invoke("request", "--provider", "anthropic", "--no-tools", "hi").stdout)
    assert body["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral",
                                                                    "ttl": "1h"}


@pytest.mark.parametrize(("given", "said"), [
    ({"openai": {"wir": "chat"}},
     "config.json: providers.openai: unknown key 'wir' (known: wire, previous_response_id)"),
    ({"openai": {"wire": 3}}, "config.json: providers.openai.wire must be text or true/false"),
    ({"openai": "chat"}, "config.json: providers.openai must be a JSON object"),
])
def test_a_bad_provider_setting_stops_ask_before_anything_is_sent(
        isolated_home, fake_server, given, said):
    _config(isolated_home, given)
    ran = invoke("ask", "--provider", "openai", "hi")
    assert ran.exit_code == 1
    [line] = ran.stderr.splitlines()
    assert said in line
    assert fake_server.requests == []
