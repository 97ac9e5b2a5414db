"""What the session log and ``ask`` show of tokens and turns (issue 21 item 16, issue 22
item 18): a provider's nonsense token count is ignored, never stored or shown."""

from __future__ import annotations

import json

import pytest

from tests.support.fakeserver import json_reply
from tests.support.replies import REPLIES
from tests.test_sessions import invoke, offline

pytestmark = pytest.mark.usefixtures(offline.__name__)


@pytest.mark.parametrize("count", [-5, 2.5, "7", True, 2**70])
def test_a_bad_token_count_from_the_provider_is_ignored(count, fake_server):
    body = REPLIES["openai"].body("A.")
    body["usage"] = {"prompt_tokens": count, "completion_tokens": 3}
    fake_server.push(json_reply(body))
    answered = invoke("ask", "--provider", "openai", "--no-stream", "--json", "q")
    assert answered.exit_code == 0, answered.stderr
    assert json.loads(answered.stdout)["usage"] == {
        "input_tokens": 0, "output_tokens": 3, "cache_read_tokens": 0, "cache_write_tokens": 0}
    (line,) = invoke("sessions", "list").stdout.splitlines()
    assert "  1 turn  3 tokens  <$0.0001  q" in line
