"""Every provider's prompt-cache counts are read (issue 26 §2): Anthropic's
``cache_read_input_tokens``/``cache_creation_input_tokens`` (apart from its
``input_tokens``), OpenAI chat's ``prompt_tokens_details.cached_tokens``, Responses'
``input_tokens_details.cached_tokens`` and Gemini's ``cachedContentTokenCount`` (shares
of the whole); ``ask --json`` shows them with the cost, priced with the cache reads and
writes at their own prices; the session log keeps both per turn, and ``sessions list``
shows the cache's share and the cost. Through ``ikigai ask``
against the local fake server, streamed and not."""

from __future__ import annotations

import json

import pytest

from ikigai_core.commands.spend import dollars
from ikigai_core.conversation import Usage
from ikigai_core.prices import cost_of
from tests.support.fakeserver import json_reply, sse_reply
from tests.support.replies import REPLIES
from tests.support.responses_replies import RESPONSES
from tests.test_sessions import invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)


def _anthropic(stream: bool):
    usage = {"input_tokens": 50, "cache_read_input_tokens": 900,
             "cache_creation_input_tokens": 50, "output_tokens": 5}
    if not stream:
        return json_reply({**REPLIES["anthropic"].body("Hi."), "usage": usage})
    events = REPLIES["anthropic"].events("Hi.")
    events[0][1]["message"]["usage"] = {**usage, "output_tokens": 1}
    events[-2][1]["usage"] = {"output_tokens": 5}  # message_delta: the output so far
    return sse_reply(events)


def _openai(stream: bool):
    usage = {"prompt_tokens": 1000, "completion_tokens": 5, "total_tokens": 1005,
             "prompt_tokens_details": {"cached_tokens": 900, "audio_tokens": 0}}
    if not stream:
        return json_reply({**REPLIES["openai"].body("Hi."), "usage": usage})
    events = REPLIES["openai"].events("Hi.")
    events[-2] = {**events[-2], "usage": usage}
    return sse_reply(events)


def _responses(stream: bool):
    usage = {"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 900},
             "output_tokens": 5, "total_tokens": 1005}
    if not stream:
        return json_reply({**RESPONSES.body("Hi."), "usage": usage})
    events = RESPONSES.events("Hi.")
    events[-1][1]["response"]["usage"] = usage  # response.completed
    return sse_reply(events)


def _google(stream: bool):
    usage = {"promptTokenCount": 1000, "cachedContentTokenCount": 900,
             "candidatesTokenCount": 5, "totalTokenCount": 1005}
    replies = REPLIES["google"]
    if not stream:
        return json_reply({**replies.body("Hi."), "usageMetadata": usage})
    return sse_reply([{**event, "usageMetadata": usage} for event in replies.events("Hi.")])


WIRES = {  # provider, environment, reply, the cache writes it reports
    "anthropic": ("anthropic", {}, _anthropic, 50),
    "openai-chat": ("openai", {"OPENAI_WIRE": "chat"}, _openai, 0),
    "openai-responses": ("openai", {"OPENAI_WIRE": "responses"}, _responses, 0),
    "google": ("google", {}, _google, 0),
}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("wire", list(WIRES))
def test_cache_counts_are_read_priced_shown_and_recorded(wire, stream, fake_server,
                                                         monkeypatch):
    provider, environ, reply, written = WIRES[wire]
    for var, value in {**environ, "GEMINI_API_KEY": "k",
                       "GOOGLE_GEMINI_BASE_URL": fake_server.url}.items():
        monkeypatch.setenv(var, value)
    fake_server.push(reply(stream))
    ran = invoke("ask", "--provider", provider, "--json",
                 "--stream" if stream else "--no-stream", "hello")
    assert ran.exit_code == 0, ran.stderr
    answer = json.loads(ran.stdout)

    assert answer["usage"] == {"input_tokens": 1000, "output_tokens": 5,
                               "cache_read_tokens": 900, "cache_write_tokens": written}
    model = answer["model"]
    usage = Usage(1000, 5, 900, written)
    assert answer["cost"] == pytest.approx(cost_of(provider, model, usage))
    assert 0 < answer["cost"] < cost_of(provider, model, Usage(1000, 5))  # the cache is cheaper
    [turn] = json.loads(invoke("sessions", "show", "--json", answer["session"]).stdout)["turns"]
    assert turn["messages"][-1]["usage"] == answer["usage"]
    assert (turn["cache_read_tokens"], turn["cache_write_tokens"]) == (900, written)
    assert turn["cost"] == pytest.approx(answer["cost"])
    [listed] = json.loads(invoke("sessions", "list", "--json").stdout)
    assert (listed["cache_read_tokens"], listed["cost"]) == (900, pytest.approx(answer["cost"]))
    assert f"1005 tokens (cache 90%)  {dollars(answer['cost'])}  hello" in invoke(
        "sessions", "list").stdout
