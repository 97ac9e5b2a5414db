"""Every plugin example in docs/plugins.md, run end to end: real discovery, real tool
processes, the real transport against the local HTTP server, the real CLI command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

import ikigai_core
from ikigai_core import Conversation, ProviderError, UserMessage
from ikigai_core.app import App
from ikigai_core.prompt import system_prompt
from ikigai_core.session import store_of
from ikigai_core.transport import send_turn
from tests.support.fakeserver import json_reply, ndjson_reply, unused_url
from tests.test_docs import PLUGIN_BLOCKS, TEXT

EXAMPLES = {
    "directory": "DirectorySource(home",
    "command source": "class ExampleSource",
    "provider": "class AcmeProvider",
    "envelope": "def ikigai_wrap_result",
    "steering": "def ikigai_before_tool_call",
    "skills": "def ikigai_skill_sources",
    "search backend": "class Kagi(SearchBackend)",  # run in tests/test_search_plugin.py
    "session store": "def ikigai_session_stores",
}
"""Each example, by a line only it holds."""


def example(key: str) -> types.ModuleType:
    """The example's code as a module of its own (it only defines things)."""
    [(where, code)] = [(w, c) for w, c in PLUGIN_BLOCKS.items() if EXAMPLES[key] in c]
    module = types.ModuleType(f"docs_example_{key.replace(' ', '_')}")
    exec(compile(code, where, "exec"), module.__dict__)
    return module


def app_with(key: str, tmp_path: Path) -> App:
    app = App(cwd=tmp_path)
    app.pm.register(example(key), name=f"docs-{key}")
    return app


def test_every_plugin_example_is_run_here():
    assert len(PLUGIN_BLOCKS) == len(EXAMPLES)
    for marker in EXAMPLES.values():
        assert sum(marker in code for code in PLUGIN_BLOCKS.values()) == 1, marker


def test_the_session_store_example_opens_its_store_for_its_scheme(tmp_path, monkeypatch):
    class AcmeStore:
        """The third party's store; the example imports it only when one is opened."""

        def __init__(self, url: str) -> None:
            self.url = url

    driver = types.ModuleType("acme_store.store")
    driver.AcmeStore = AcmeStore  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "acme_store", types.ModuleType("acme_store"))
    monkeypatch.setitem(sys.modules, "acme_store.store", driver)
    monkeypatch.setenv("IKIGAI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("IKIGAI_SESSIONS_URL", "acme://team/sessions")
    store = store_of(app_with("session store", tmp_path))
    assert isinstance(store, AcmeStore) and store.url == "acme://team/sessions"


def test_every_public_name_is_documented_and_importable():
    documented = set(re.findall(r"^\| `(\w+)` \|", TEXT, re.M))
    public = set(ikigai_core.__all__) - {"__version__"}
    assert public <= documented, f"not in docs/plugins.md: {sorted(public - documented)}"
    for name in public:
        assert getattr(ikigai_core, name) is not None
    with pytest.raises(AttributeError, match="has no attribute 'Provders'"):
        ikigai_core.Provders  # noqa: B018


def test_importing_the_package_loads_no_provider_side_module():
    """The public surface costs a start-up nothing: its provider names load on first use."""
    script = ("import sys, ikigai_core\nprint(sorted(m for m in sys.modules if m in "
              "('ikigai_core.conversation', 'ikigai_core.providers', 'ikigai_core.wire', "
              "'ikigai_core.sse', 'ikigai_core.discovery')))")
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60)
    assert ran.stdout.strip() == "[]", ran.stderr


def test_directory_source(tmp_path, isolated_home, make_tool):
    make_tool(isolated_home / "acme-tools", "stamp-tool")
    app = app_with("directory", tmp_path)
    registry = app.registry()
    assert registry["stamp"].source == "acme"
    envelope = app.executor.call(registry, "stamp", {}).envelope
    assert envelope["tool_success"] is True


def test_a_source_of_commands_that_are_not_files(tmp_path, isolated_home):
    app = app_with("command source", tmp_path)
    registry = app.registry()
    assert registry["word_count"].source == "example"
    result = app.executor.call(registry, "word_count", {"text": "one two three"})
    assert result.outcome.success, result.envelope


@pytest.mark.parametrize("stream", [False, True])
def test_provider_answers_through_the_transport(fake_server, stream):
    [provider] = example("provider").ikigai_provider_serializers()
    if stream:
        fake_server.push(ndjson_reply([{"delta": "Hello "}, {"delta": "there."}, {"done": True}]))
    else:
        fake_server.push(json_reply({"text": "Hello there."}))
    seen: list[str] = []
    message = send_turn(provider, Conversation([UserMessage("hi")], system="Be brief."), [],
                        model="acme-large", stream=stream, on_text=seen.append,
                        environ={"ACME_API_KEY": "k-1", "ACME_BASE_URL": fake_server.url})
    assert message.text == "Hello there."
    assert "".join(seen) == ("Hello there." if stream else "")
    [request] = fake_server.requests
    assert (request.path, request.headers["authorization"]) == ("/chat", "Bearer k-1")
    assert request.json["user"] == [{"role": "user", "content": "hi"}]
    assert request.json["system"] == "Be brief."


def test_provider_with_its_server_unreachable_is_one_line():
    [provider] = example("provider").ikigai_provider_serializers()
    url = unused_url()
    with pytest.raises(ProviderError) as info:
        send_turn(provider, Conversation([UserMessage("hi")]), [], model="m", stream=False,
                  environ={"ACME_BASE_URL": url}, max_retries=0)
    assert str(info.value).startswith(f"Cannot reach provider 'acme' at {url}: ")
    assert str(info.value).endswith("; check ACME_BASE_URL")


def test_provider_is_chosen_by_name(tmp_path):
    from ikigai_core.providers import get_provider

    app = app_with("provider", tmp_path)
    assert get_provider(app.pm, "acme", app.notices).default_model == "acme-large"
    assert list(app.notices) == []


def test_envelope_replaces_the_default(tmp_path, isolated_home):
    app = app_with("envelope", tmp_path)
    registry = app.registry()
    ok = app.executor.call(registry, "file_read", {"file_path": str(tmp_path / "none")}).envelope
    assert set(ok) <= {"ok", "data", "code", "message"}
    missing = app.executor.call(registry, "no_such_tool", {}).envelope
    assert missing["ok"] is False and missing["code"] == "TOOL_NOT_FOUND"


def test_steering_denies_logs_cleans_the_environment_prompts_and_adds_a_command(
    tmp_path, isolated_home, make_tool, monkeypatch
):
    monkeypatch.setenv("MY_SECRET", "hunter2")
    make_tool(isolated_home / "tools", "env-tool",
              body="print(json.dumps({'secret': os.environ.get('MY_SECRET')}))")
    app = app_with("steering", tmp_path)
    registry = app.registry()
    denied = app.executor.call(registry, "bash", {"command": "rm -rf /tmp/x"}).envelope
    assert denied["error_code"] == "TOOL_DENIED" and "rm -rf" in denied["error"]
    clean = app.executor.call(registry, "env", {}).envelope
    assert clean["tool_success"] is True and clean["result"] == {"secret": None}
    lines = [json.loads(line) for line in (isolated_home / "audit.jsonl").read_text().splitlines()]
    assert [(line["tool"], line["ok"]) for line in lines] == [("bash", False), ("env", True)]
    assert f"The project lives in {tmp_path}." in (system_prompt(app) or "")
    [hello] = [c for answer in app.pm.hook.ikigai_commands() for c in answer
               if c.name == "hello"]
    assert CliRunner().invoke(hello).output == "hello\n"


def test_skill_source(tmp_path, isolated_home):
    folder = isolated_home / "acme-skills" / "deploy"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: deploy\ndescription: Ship it.\n---\nSteps.\n")
    app = app_with("skills", tmp_path)
    assert [(s.name, s.source) for s in app.skills.values()] == [("deploy", "acme")]
    assert system_prompt(app).endswith("\n- deploy: Ship it.")
    assert "load_skill" in app.registry()
