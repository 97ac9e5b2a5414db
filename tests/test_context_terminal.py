"""``/compact``, ``/uncompact`` and ``/context`` in ``ikigai chat`` on a real terminal
(issue 26 section 3): what the screen shows, asserted through pyte."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.support.vt import Screen as VirtualScreen
from tests.support.window import SUMMARY, WindowModel

IKIGAI = str(Path(sys.executable).with_name("ikigai"))


def test_compact_and_uncompact_show_a_line_on_the_terminal(isolated_home, tmp_path):
    (isolated_home / "config.json").write_text(json.dumps({"compact_keep": 1,
                                                           "context_window": 100_000}))
    model = WindowModel("openai", 100_000, ["First answer.", "Second answer.", "Third."])
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": model.url,
           "IKIGAI_HOME": str(isolated_home), "TERM": "xterm-256color"}
    argv = [IKIGAI, "chat", "--yes", "--provider", "openai"]
    try:
        with VirtualScreen(argv, env=env, cwd=tmp_path) as chat:
            chat.wait_for("tokens:")
            chat.write(b"alpha\r")
            chat.wait_for("First answer.")
            chat.write(b"beta\r")
            chat.wait_for("Second answer.")
            chat.write(b"/compact keep names\r")
            shown = chat.wait_for("/uncompact undoes it")
            assert "compacted: 2 messages summarised" in shown
            assert "(/compact)" in shown
            chat.write(b"/context\r")
            shown = chat.wait_for("Compacted: the first 2 messages are sent as a summary")
            assert "of 100,000 tokens" in shown
            chat.write(b"/uncompact\r")
            chat.wait_for("uncompacted: the model is sent the whole conversation again")
            chat.write(b"gamma\r")
            chat.wait_for("Third.")
            chat.write(b"/quit\r")
            assert chat.wait() == 0
    finally:
        model.close()
    (summary,) = model.summaries
    assert b"keep names" in summary.body
    assert SUMMARY not in json.dumps(model.server.requests[-1].json)  # uncompacted
