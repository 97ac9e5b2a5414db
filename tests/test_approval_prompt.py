"""The approval question and the tool lines as a person sees them (issue 21 item 7, issue 22
items 10 and 11): format characters escaped, real line breaks, the tool's own time."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
import unicodedata
from types import SimpleNamespace

import pytest

from ikigai_core.commands.output import printable
from ikigai_core.commands.screen import QuestionTime
from ikigai_core.conversation import ToolCall
from tests import test_chat_terminal
from tests.support.replies import REPLIES
from tests.support.vt import Screen as VirtualScreen
from tests.test_chat_terminal import IKIGAI

env = test_chat_terminal.env  # the fixture: chat's environment, the fake server, an xterm
REPLY = REPLIES["openai"]
HIDDEN = {"\u200b": "\\u200b", "\u202e": "\\u202e", "\u2066": "\\u2066", "\u2028": "\\u2028",
          "\u2029": "\\u2029", "\ufeff": "\\ufeff", "\U000e0041": "\\U000e0041"}
"""Characters a terminal would not show as themselves, and how ikigai spells them."""
SNEAKY = "cat notes\u202etxt.exe\u200b\u2066\u2028\u2029\ufeff\U000e0041"


def test_every_format_character_and_both_separators_are_escaped():
    hidden = [chr(code) for code in range(sys.maxunicode + 1)
              if unicodedata.category(chr(code)) in ("Cf", "Zl", "Zp")]
    assert len(hidden) > 150
    for char in hidden:
        shown = printable(f"a{char}b", keep_newlines=False)
        assert char not in shown and shown.startswith("a\\") and shown.endswith("b"), hex(ord(char))
    assert printable("tab\tand é ü 中文 🙂\n") == "tab\tand é ü 中文 🙂\n"  # kept as they are


def test_the_models_prose_keeps_the_joiners_words_and_emoji_need(fake_server, env, tmp_path):
    """Persian's zero-width non-joiner and an emoji's zero-width joiner stay in the answer;
    a bidi override there is escaped like everywhere else."""
    words = "می‌خواهم 👩‍💻"
    fake_server.push(REPLY.reply(f"{words} ‮evil"))
    done = subprocess.run([IKIGAI, "ask", "--provider", "openai", "--no-stream", "go"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**env, "TERM": "dumb"})
    assert done.stdout == f"{words} \\u202eevil\n", done.stderr
    assert printable(words) == "می\\u200cخواهم 👩\\u200d💻"  # not prose: every one escaped


def test_the_tool_line_escapes_them(fake_server, env, tmp_path):
    fake_server.push(REPLY.reply(calls=[("c1", "bash", {"command": SNEAKY})]),
                     REPLY.reply("Done."))
    done = subprocess.run([IKIGAI, "ask", "--provider", "openai", "--no-stream", "go"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**env, "TERM": "dumb"})
    called = done.stderr.splitlines()[0]
    assert called.startswith("ikigai: → bash ")
    for char, spelled in HIDDEN.items():
        assert char not in called and spelled in called


@pytest.fixture
def asking_chat(env, tmp_path):
    """``ikigai chat`` rendered on a terminal, asking before bash runs."""
    with VirtualScreen([IKIGAI, "chat", "--provider", "openai"], env=env, cwd=tmp_path,
                       columns=120) as chat:
        chat.wait_for("tokens:")
        yield chat


def test_the_question_shows_line_breaks_and_escapes_the_rest(asking_chat, fake_server):
    fake_server.push(REPLY.reply(calls=[("c1", "bash", {"command": SNEAKY})], stream=True),
                     REPLY.reply("Done.", stream=True))
    asking_chat.write(b"go\r")
    shown = asking_chat.wait_for("(or type why not):")
    question = shown[shown.index("Allow bash"):].rstrip()
    assert question == (f'Allow bash {{\n "command": "{printable(SNEAKY)}"\n}}?\n'
                        "[y]es once, [a]lways, [n]o (or type why not):"), question
    asking_chat.write(b"n\r")
    asking_chat.wait_for("Done.")


def test_a_tool_line_times_the_tool_not_the_answer(asking_chat, fake_server):
    """Answered after 2 s: ``true`` still shows its own fraction of a second, and a
    declined call no time at all."""
    fake_server.push(REPLY.reply(calls=[("c1", "bash", {"command": "true"})], stream=True),
                     REPLY.reply("Ran.", stream=True),
                     REPLY.reply(calls=[("c2", "bash", {"command": "false"})], stream=True),
                     REPLY.reply("Declined.", stream=True))
    for prompt, answer, done in ((b"one\r", b"y\r", "Ran."), (b"two\r", b"n\r", "Declined.")):
        asking_chat.write(prompt)
        asking_chat.wait_for(lambda text: text.rstrip().endswith("(or type why not):"))
        time.sleep(2)
        asking_chat.write(answer)
        asking_chat.wait_for(done)
    shown = asking_chat.text
    ran = re.search(r"^● bash  true  ok (\d+\.\d)s$", shown, re.M)
    declined = re.search(r"^● bash  false  failed TOOL_DENIED (\d+\.\d)s$", shown, re.M)
    assert ran and declined, shown
    assert float(ran[1]) < 1.5 and float(declined[1]) < 1.5, shown


def test_the_spinner_counts_from_the_answer(asking_chat, fake_server):
    fake_server.push(REPLY.reply(calls=[("c1", "bash", {"command": "sleep 3"})], stream=True),
                     REPLY.reply("Slept.", stream=True))
    asking_chat.write(b"go\r")
    asking_chat.wait_for(lambda text: text.rstrip().endswith("(or type why not):"))
    time.sleep(2)
    asking_chat.write(b"y\r")
    spinner = re.compile(r"^\S bash sleep 3 (\d+\.\d)s$", re.M)
    shown = asking_chat.wait_for(spinner.search)
    assert float(spinner.search(shown)[1]) < 1.5, shown  # 2 s and more before
    asking_chat.wait_for("Slept.")


def test_the_plain_question_escapes_them_too(fake_server, env, tmp_path):
    fake_server.push(REPLY.reply(calls=[("c1", "bash", {"command": SNEAKY})]),
                     REPLY.reply("Done."))
    plain = {**env, "TERM": "dumb"}
    with VirtualScreen([IKIGAI, "chat", "--provider", "openai", "--no-stream"], env=plain,
                       cwd=tmp_path, columns=120) as chat:
        chat.wait_for(lambda text: text.rstrip().endswith("\n>"))
        chat.write(b"go\r")
        shown = chat.wait_for("(or type why not):")
        chat.write(b"n\r")
        chat.wait_for("Done.")
    for char, spelled in HIDDEN.items():
        assert char not in shown and spelled in shown


def test_a_calls_wait_is_what_its_own_thread_spent_asking():
    """In-process: two calls in two threads; only the one that asked waited."""
    times = QuestionTime()
    asked, silent = ToolCall("c1", "bash", {}), ToolCall("c2", "glob", {})

    def run(call: ToolCall, question: float) -> None:
        if question:
            with times.asking():
                time.sleep(question)
        times.ikigai_after_tool_call(record=SimpleNamespace(call_id=call.id))

    threads = [threading.Thread(target=run, args=(asked, 0.3)),
               threading.Thread(target=run, args=(silent, 0))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert times.waited(asked) >= 0.3 and times.waited(silent) == 0
    assert times.waited(asked) == 0  # told once
