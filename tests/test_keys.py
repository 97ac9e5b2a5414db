"""``ikigai keys``: provider keys stored in the system keyring or ``$IKIGAI_HOME/keys.json``,
used like an environment key (which still wins), never shown, never handed to a tool; all
through the real ``ikigai`` program against the local fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.imports import heavy_imports
from tests.support.replies import REPLIES

IKIGAI = str(Path(sys.executable).with_name("ikigai"))
STORED = "sk-stored-NEVER-SHOWN-0123456789"
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
URL_VARS = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL")
NO_KEYRING = "keyring.backends.fail.Keyring"


@pytest.fixture
def env(isolated_home, tmp_path):
    """ikigai's environment: no key, no base URL, keyring's fail backend (the file store)."""
    environ = {k: v for k, v in os.environ.items() if k not in (*KEY_VARS, *URL_VARS)}
    environ["PYTHON_KEYRING_BACKEND"] = NO_KEYRING
    return environ


def ikigai(*args: str, env: dict[str, str], input: str | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``ikigai ARGS`` as a real program (stdin a pipe holding ``input``)."""
    return subprocess.run([IKIGAI, *args], input=input or "", capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=60)


def test_a_key_set_from_a_pipe_goes_to_keys_json_user_only_and_is_listed_not_shown(
        env, isolated_home):
    done = ikigai("keys", "set", "openai", env=env, input=STORED + "\n")
    keys_file = isolated_home / "keys.json"
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"Stored the key of openai in {keys_file}.\n", "")
    assert keys_file.stat().st_mode & 0o777 == 0o600
    listed = ikigai("keys", "list", env=env)
    assert listed.returncode == 0, listed.stderr
    lines = dict(line.split(None, 1) for line in listed.stdout.splitlines())
    assert lines["openai"] == "keys.json" and lines["anthropic"] == "no key"
    assert STORED not in listed.stdout + listed.stderr
    assert json.loads(ikigai("keys", "list", "--json", env=env).stdout)["openai"] == "keys.json"
    removed = ikigai("keys", "remove", "openai", env=env)
    assert (removed.returncode, removed.stdout) == (0, "Removed the stored key of openai.\n")
    assert STORED not in keys_file.read_text()
    again = ikigai("keys", "remove", "openai", env=env)
    assert (again.returncode, again.stderr) == (
        2, "ikigai: no key is stored for 'openai' (ikigai keys list shows the keys)\n")


def test_ask_uses_the_stored_key_and_finds_its_provider_without_provider_option(
        env, fake_server):
    ikigai("keys", "set", "anthropic", env=env, input=STORED)
    env["ANTHROPIC_BASE_URL"] = fake_server.url
    fake_server.push(REPLIES["anthropic"].reply("hello from the stored key", stream=False))
    done = ikigai("ask", "--no-stream", "hi", env=env)
    assert (done.returncode, done.stdout) == (0, "hello from the stored key\n"), done.stderr
    assert fake_server.requests[0].headers["x-api-key"] == STORED


def test_an_environment_key_wins_over_a_stored_one_and_keyring_is_not_imported(
        env, fake_server, tmp_path):
    ikigai("keys", "set", "openai", env=env, input=STORED)
    env.update(OPENAI_API_KEY="sk-from-the-environment-0123", OPENAI_BASE_URL=fake_server.url)
    listed = ikigai("keys", "list", env=env)
    assert "openai     OPENAI_API_KEY" in listed.stdout
    fake_server.push(REPLIES["openai"].reply("ok", stream=False))
    assert heavy_imports(["ask", "--no-stream", "hi"], env=env, cwd=str(tmp_path),
                         watched=["keyring"]) == []
    assert fake_server.requests[0].headers["authorization"] == "Bearer sk-from-the-environment-0123"


def test_a_stored_key_never_reaches_a_tool_not_even_under_another_name(
        env, fake_server, approve_all):
    ikigai("keys", "set", "openai", env=env, input=STORED)
    env.update(OPENAI_BASE_URL=fake_server.url, MY_COPY_OF_THE_KEY=STORED)
    replies = REPLIES["openai"]
    fake_server.push(replies.reply("", [("c1", "bash", {"command": "env"})], stream=False),
                     replies.reply("done", stream=False))
    done = ikigai("ask", "--no-stream", "show env", env=env)
    assert done.returncode == 0, done.stderr
    sent_back = fake_server.requests[1].body.decode()
    assert "MY_COPY_OF_THE_KEY" not in sent_back and "PATH=" in sent_back
    assert STORED not in sent_back
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {STORED}"


def test_a_rejected_stored_key_is_named_with_where_it_is_and_how_to_replace_it(
        env, fake_server, isolated_home):
    ikigai("keys", "set", "anthropic", env=env, input=STORED)
    env["ANTHROPIC_BASE_URL"] = fake_server.url
    rejected = REPLIES["anthropic"].error(401, f"invalid x-api-key {STORED}")
    fake_server.push(rejected, rejected)
    done = ikigai("ask", "--no-stream", "hi", env=env)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "ikigai: Provider 'anthropic' rejected the API key stored in keys.json by ikigai keys "
        "(HTTP 401): replace it with `ikigai keys set anthropic`\n")
    listed = ikigai("models", "--provider", "anthropic", env=env)
    assert listed.stderr == (
        "ikigai: anthropic: Provider 'anthropic' rejected the API key stored in keys.json by "
        "ikigai keys (HTTP 401): replace it with `ikigai keys set anthropic`; showing the "
        "built-in list\n")
    env.update(ANTHROPIC_BASE_URL=fake_server.url, ANTHROPIC_API_KEY="sk-in-the-env-0123456")
    fake_server.push(rejected)
    from_env = ikigai("ask", "--no-stream", "hi", env=env)
    assert from_env.stderr == ("ikigai: Provider 'anthropic' rejected the API key (HTTP 401): "
                               "set a valid ANTHROPIC_API_KEY\n")


def test_a_keys_file_others_can_read_is_refused_in_one_line(env, isolated_home):
    ikigai("keys", "set", "openai", env=env, input=STORED)
    (isolated_home / "keys.json").chmod(0o644)
    for args in (("keys", "list"), ("ask", "hi")):
        done = ikigai(*args, env=env)
        assert done.returncode != 0 and "Traceback" not in done.stderr
        assert done.stderr == (f"ikigai: {isolated_home / 'keys.json'} can be read by other "
                               "users (mode 644); ikigai refuses it: `chmod 600 "
                               f"{isolated_home / 'keys.json'}`, and replace keys others may "
                               "have read\n")


def test_bad_input_is_one_line_and_stores_nothing(env, isolated_home):
    empty = ikigai("keys", "set", "openai", env=env, input="\n")
    assert (empty.returncode, empty.stderr) == (2, (
        "ikigai: the key read for 'openai' is empty or holds spaces; pipe just the key: "
        "ikigai keys set openai < FILE\n"))
    unknown = ikigai("keys", "set", "opnai", env=env, input=STORED)
    assert unknown.returncode == 2
    assert unknown.stderr.startswith("ikigai: Unknown provider 'opnai'. Installed providers:")
    assert not (isolated_home / "keys.json").exists()


def test_no_key_anywhere_says_which_variables_or_keys_set(env):
    done = ikigai("ask", "hi", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(
        "ikigai: No API key found: set ANTHROPIC_API_KEY or GOOGLE_API_KEY or OPENAI_API_KEY, "
        "or store one with `ikigai keys set PROVIDER` (installed: ")
    named = ikigai("ask", "--provider", "openai", "hi", env=env)
    assert named.stderr == ("ikigai: No API key for provider 'openai': set OPENAI_API_KEY, "
                            "or store one with `ikigai keys set openai`\n")


BACKEND = '''
import json, os
from keyring.backend import KeyringBackend

class Keyring(KeyringBackend):
    """A keyring in a file of the test's, standing for the system's."""
    priority = 5
    path = os.environ["TEST_KEYRING_FILE"]

    def _all(self):
        return json.load(open(self.path)) if os.path.exists(self.path) else {}

    def get_password(self, service, username):
        return self._all().get(f"{service}/{username}")

    def set_password(self, service, username, password):
        found = self._all()
        found[f"{service}/{username}"] = password
        json.dump(found, open(self.path, "w"))

    def delete_password(self, service, username):
        found = self._all()
        del found[f"{service}/{username}"]
        json.dump(found, open(self.path, "w"))
'''


def test_with_a_system_keyring_the_key_goes_there_and_keys_json_only_names_it(
        env, isolated_home, tmp_path, fake_server):
    pytest.importorskip("keyring", reason="keyring (the optional extra) is not installed")
    (tmp_path / "testkeyring.py").write_text(textwrap.dedent(BACKEND))
    env.update(PYTHON_KEYRING_BACKEND="testkeyring.Keyring", PYTHONPATH=str(tmp_path),
               TEST_KEYRING_FILE=str(tmp_path / "ring.json"))
    done = ikigai("keys", "set", "openai", env=env, input=STORED)
    assert done.stdout == "Stored the key of openai in the system keyring.\n", done.stderr
    assert json.loads((tmp_path / "ring.json").read_text()) == {"ikigai/openai": STORED}
    assert STORED not in (isolated_home / "keys.json").read_text()
    assert "openai     keyring" in ikigai("keys", "list", env=env).stdout
    assert heavy_imports(["keys", "list"], env=env, cwd=str(tmp_path), watched=["keyring"]) == []
    env["OPENAI_BASE_URL"] = fake_server.url
    fake_server.push(REPLIES["openai"].reply("ok", stream=False))
    assert ikigai("ask", "--no-stream", "hi", env=env).stdout == "ok\n"
    assert fake_server.requests[0].headers["authorization"] == f"Bearer {STORED}"
    assert ikigai("keys", "remove", "openai", env=env).returncode == 0
    assert json.loads((tmp_path / "ring.json").read_text()) == {}
