"""The pytest-ikigai fixtures. Nothing of ikigai is imported until a fixture is used."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ikigai_core.app import App
    from ikigai_core.tools import Tool
    from pytest_ikigai.model import FakeModel, Turn

SOURCE = "pytest"
"""The source name of a tool given by path."""


class ToolHandle:
    """One tool, called through ikigai's real executor (validation, plugins, its own
    process, budgets, the envelope). Calls carry no call id: approvals judge only the
    model's calls; the sandbox applies as configured.

    :param app: the ikigai invocation the calls run in.
    :param tool: the tool, as discovered.
    """

    def __init__(self, app: App, tool: Tool) -> None:
        self.app = app
        self.tool = tool

    @property
    def schema(self) -> Mapping[str, Any]:
        """The schema the tool answered ``--schema`` with."""
        return self.tool.schema

    def __call__(self, arguments: Any) -> dict[str, Any]:
        """The envelope of one call with ``arguments``."""
        return self.app.executor.call({self.tool.name: self.tool}, self.tool.name,
                                      arguments).envelope


def find_tool(app: App, name_or_path: str | os.PathLike[str]) -> Tool:
    """The tool called ``name_or_path`` in ``app``'s registry, or the ``*-tool`` file at that
    path (asked for its schema as discovery asks any tool).

    :raises LookupError: no such tool, or the file is not a usable tool (with the reason).
    """
    from ikigai_core import hookimpl
    from ikigai_core.tool_directory import DirectorySource

    text = os.fspath(name_or_path)
    if os.sep in text or isinstance(name_or_path, os.PathLike):
        path = Path(text).absolute()

        class PathPlugin:
            @hookimpl
            def ikigai_tool_sources(self) -> list[DirectorySource]:
                return [DirectorySource(path.parent, name=SOURCE, precedence=1000,
                                        only=[path.name])]

        app.pm.register(PathPlugin(), name=f"pytest-ikigai:{path}")
    registry = app.registry(refresh=True)
    found = [tool for tool in registry.values()
             if tool.name == text or (tool.source == SOURCE and tool.path is not None
                                      and os.path.samefile(tool.path, text))]
    if found:
        return found[0]
    reasons = [f"{skipped.name}: {skipped.reason}" for skipped in registry.skipped
               if skipped.kind != "ignored"]
    raise LookupError(f"no tool {text!r}" + (f" ({'; '.join(reasons)})" if reasons else ""))


@pytest.fixture
def ikigai_home(tmp_path_factory: pytest.TempPathFactory,
                monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ``$IKIGAI_HOME`` for this test (settings, caches, rules, sessions)."""
    home = tmp_path_factory.mktemp("ikigai-home")
    monkeypatch.setenv("IKIGAI_HOME", str(home))
    return home


@pytest.fixture
def ikigai_tool(ikigai_home: Path) -> Callable[[str | os.PathLike[str]], ToolHandle]:
    """``ikigai_tool(name_or_path)``: a :class:`ToolHandle`; ``handle(arguments)`` runs one
    call through the real executor and returns the envelope."""
    from ikigai_core.app import App

    def make(name_or_path: str | os.PathLike[str]) -> ToolHandle:
        app = App()
        return ToolHandle(app, find_tool(app, name_or_path))

    return make


@pytest.fixture
def assert_portable(ikigai_home: Path) -> Callable[[Any], None]:
    """``assert_portable(tool)`` (a name, a path or a :class:`ToolHandle`): every installed
    provider accepts the tool, as ``ikigai tool check`` reports; fails naming who does not
    and why."""
    from ikigai_core.app import App
    from ikigai_core.providers import collect_providers

    def check(tool: Any) -> None:
        app = App()
        found = tool.tool if isinstance(tool, ToolHandle) else find_tool(app, tool)
        providers = collect_providers(app.pm, app.notices)
        assert providers, "no provider is installed to check the tool against"
        refused = [f"{name}: {fit.reason}" for name, provider in providers.items()
                   if (fit := provider.fit_tool(found)).declaration is None]
        assert not refused, f"tool '{found.name}' is left out by " + "; ".join(refused)

    return check


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch,
               ikigai_home: Path) -> Iterator[Callable[..., FakeModel]]:
    """``fake_model(script, provider="openai", wire=None)``: a local server speaking
    ``provider``'s wire (for ``openai``, ``wire="responses"`` speaks the Responses API) that
    plays ``script`` (answers as strings, tool calls as ``[(name, arguments), ...]``) and
    refuses what the real API would, with this process's environment pointing ikigai at it,
    so a whole ``ikigai ask`` (in process or as a subprocess) runs offline."""
    from pytest_ikigai.model import FakeModel

    started: list[FakeModel] = []

    def play(script: Sequence[Turn], provider: str = "openai",
             wire: str | None = None) -> FakeModel:
        model = FakeModel(script, provider, wire)
        started.append(model)
        for name, value in model.environ.items():
            monkeypatch.setenv(name, value)
        return model

    yield play
    for model in started:
        model.close()


@pytest.fixture
def ikigai_approve_all(ikigai_home: Path) -> None:
    """Every tool call the model makes is approved (a rule allowing ``*``)."""
    (ikigai_home / "permissions.json").write_text(
        '{"rules": [{"id": 1, "tool": "*", "decision": "allow"}]}')


@pytest.fixture
def ikigai_sandbox(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """``ikigai_sandbox("read-only" | "workspace-write" | "off")``: run the test's tool
    processes under that sandbox (skips the test where bubblewrap is missing)."""

    def choose(mode: str) -> None:
        if mode != "off" and shutil.which("bwrap") is None:
            pytest.skip("the sandbox needs bubblewrap (bwrap), which is not installed")
        monkeypatch.setenv("IKIGAI_SANDBOX", mode)

    return choose
