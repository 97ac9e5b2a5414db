"""``ikigai keys`` and the key store in-process (the coverage gate sees these lines); the
user-facing behaviour is in tests/test_keys.py, through the real program."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from ikigai_core.app import App
from ikigai_core.cli import cli
from ikigai_core.errors import ConfigError, UsageError
from ikigai_core.keys import KeyStore, key_source, with_stored_key
from ikigai_core.providers import get_provider
from ikigai_core.session import choose_provider

KEY = "sk-inprocess-0123456789"


class RingBackend:
    """A keyring backend in memory, as ``keyring.get_keyring()`` gives one."""

    priority = 5

    def __init__(self) -> None:
        self.stored: dict[tuple[str, str], str] = {}


@pytest.fixture
def ring(monkeypatch):
    """``keyring`` as a module with a usable in-memory backend."""
    backend = RingBackend()

    class Module:
        @staticmethod
        def get_keyring():
            return backend

        @staticmethod
        def get_password(service, user):
            return backend.stored.get((service, user))

        @staticmethod
        def set_password(service, user, password):
            backend.stored[service, user] = password

        @staticmethod
        def delete_password(service, user):
            del backend.stored[service, user]

    monkeypatch.setitem(sys.modules, "keyring", Module)
    return backend


@pytest.fixture
def no_keyring(monkeypatch):
    monkeypatch.setitem(sys.modules, "keyring", None)


def invoke(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_the_commands_with_the_file_store(no_keyring, isolated_home, monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert invoke("keys", "set", "openai", input=KEY + "\n").exit_code == 0
    assert KEY in (isolated_home / "keys.json").read_text()
    listed = invoke("keys", "list")
    assert "openai     keys.json" in listed.stdout and KEY not in listed.stdout
    assert json.loads(invoke("keys", "list", "--json").stdout)["anthropic"] is None
    assert invoke("keys", "remove", "openai").stdout == "Removed the stored key of openai.\n"
    assert invoke("keys", "set", "openai", input="two words").exit_code == 2


def test_a_typed_key_is_read_without_echo(no_keyring, isolated_home, monkeypatch):
    from ikigai_core.commands import keys as command

    asked = []
    monkeypatch.setattr(command.sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(command.click, "prompt",
                        lambda text, **kw: asked.append(kw["hide_input"]) or KEY)
    command.set_key.callback.__wrapped__(App(), "openai")
    assert asked == [True] and KeyStore(isolated_home).get("openai") == KEY


def test_a_key_for_a_provider_not_installed_is_listed_as_such(no_keyring, isolated_home):
    (isolated_home / "keys.json").write_text(json.dumps(
        {"version": 1, "keys": {"gone": {"store": "file", "key": KEY},
                                "ring": {"store": "keyring"}}}))
    (isolated_home / "keys.json").chmod(0o600)
    listed = invoke("keys", "list").stdout
    assert "gone       keys.json (provider not installed)" in listed
    assert "ring       keyring (provider not installed)" in listed


def test_the_keyring_store(ring, isolated_home):
    store = KeyStore(isolated_home)
    assert store.set("openai", KEY) == "keyring"
    assert ring.stored == {("ikigai", "openai"): KEY}
    assert store.stored() == {"openai": "keyring"} and store.get("openai") == KEY
    ring.stored.clear()
    with pytest.raises(ConfigError, match="gone from the system keyring"):
        store.get("openai")
    store.remove("openai")  # gone from the keyring already: only the index entry goes
    assert store.stored() == {}
    store.set("openai", KEY)
    store.remove("openai")
    assert ring.stored == {}
    with pytest.raises(UsageError, match="no key is stored for 'openai'"):
        store.remove("openai")


def test_a_key_in_a_keyring_that_is_gone(ring, isolated_home, monkeypatch):
    KeyStore(isolated_home).set("openai", KEY)
    ring.priority = 0  # PYTHON_KEYRING_BACKEND=keyring.backends.fail.Keyring
    with pytest.raises(ConfigError, match="system keyring, which cannot be reached"):
        KeyStore(isolated_home).get("openai")
    monkeypatch.setitem(sys.modules, "keyring", None)
    assert KeyStore(isolated_home).set("openai", KEY) == "file"


@pytest.mark.parametrize("text", ["not json", "[]", '{"keys": {"a": {"store": "file"}}}',
                                  '{"keys": {"a": {"store": "elsewhere"}}}'])
def test_a_damaged_keys_file_is_one_error(isolated_home, text):
    path = isolated_home / "keys.json"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="is not a keys file of ikigai's; fix or remove it"):
        KeyStore(isolated_home).stored()


def test_choosing_and_using_a_stored_key(no_keyring, isolated_home, monkeypatch):
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    KeyStore(isolated_home).set("google", KEY)
    app = App()
    google = choose_provider(app, None)
    assert google.name == "google"
    assert key_source(google, app.environ, KeyStore(isolated_home).stored()) == "keys.json"
    with_stored_key(google, app.environ, isolated_home)
    assert app.environ["GOOGLE_API_KEY"] == KEY
    app.environ["GOOGLE_API_KEY"] = "sk-env-wins-0123456789"
    with_stored_key(google, app.environ, isolated_home)
    assert app.environ["GOOGLE_API_KEY"] == "sk-env-wins-0123456789"
    assert key_source(google, app.environ, {"google": "file"}) == "GOOGLE_API_KEY"
    openai = get_provider(app.pm, "openai")
    with_stored_key(openai, app.environ, isolated_home)
    assert "OPENAI_API_KEY" not in app.environ
    assert key_source(openai, app.environ, {}) is None
    keyless = type("Keyless", (), {"name": "local", "api_key_env": ()})()
    with_stored_key(keyless, app.environ, isolated_home)  # asks no store


def test_a_keys_file_others_can_read_is_refused(no_keyring, isolated_home):
    KeyStore(isolated_home).set("openai", KEY)
    (isolated_home / "keys.json").chmod(0o640)
    with pytest.raises(ConfigError, match=r"can be read by other users \(mode 640\)"):
        KeyStore(isolated_home).get("openai")


def test_a_failing_keyring_is_one_line_and_changes_nothing(ring, isolated_home, monkeypatch):
    import keyring

    def locked(*args):
        raise RuntimeError("Failed to unlock the collection!\n(dbus)")

    monkeypatch.setattr(keyring, "set_password", locked)
    with pytest.raises(ConfigError, match=r"^the system keyring failed \(Failed to unlock the "
                       r"collection! \(dbus\)\); unlock it and try again"):
        KeyStore(isolated_home).set("openai", KEY)
    assert not (isolated_home / "keys.json").exists()
    done = invoke("keys", "set", "openai", input=KEY)
    assert done.exit_code == 1 and "Traceback" not in done.stderr


def test_a_session_names_a_rejected_keyring_key_and_only_a_stored_one(ring, isolated_home,
                                                                     fake_server, monkeypatch):
    from ikigai_core.errors import KeyRejected
    from ikigai_core.session import Session
    from tests.support.replies import REPLIES

    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    KeyStore(isolated_home).set("openai", KEY)
    app = App(environ={"IKIGAI_HOME": str(isolated_home), "OPENAI_BASE_URL": fake_server.url})
    session = Session.open(app, "openai", log=False, stream=False, no_tools=True)
    assert app.stored_keys == {"openai": "keyring"}
    fake_server.push(REPLIES["openai"].error(401, "bad key"))
    with pytest.raises(KeyRejected) as info:
        session.send("hi")
    assert str(info.value) == ("Provider 'openai' rejected the API key stored in the system "
                               "keyring by ikigai keys (HTTP 401): replace it with "
                               "`ikigai keys set openai`")
    app.stored_keys.clear()  # the key came from the environment: its variable is named
    fake_server.push(REPLIES["openai"].error(401, "bad key"))
    with pytest.raises(KeyRejected, match="set a valid OPENAI_API_KEY$"):
        session.send("hi")
