"""An MCP server's tool left out of the toolset never runs, whatever the model asks
(issue 21 item 11); the model is the fake OpenAI server of tests/test_call_boundary.py."""

from __future__ import annotations

from tests.test_call_boundary import ask, model, results  # noqa: F401 (model: a fixture)

from .conftest import edge


def test_an_mcp_tool_outside_the_toolset_is_not_called(model, servers, tmp_path):  # noqa: F811
    servers({"edge": edge()})
    marker = tmp_path / "marker"
    write = ("c1", "edge__write", {"path": str(marker)})
    server = model([write, ("c2", "glob", {"pattern": "*", "path": None})])
    ran = ask(tmp_path, "--tools", "glob", "--yes")
    assert not marker.exists()
    assert [e.get("error_code") for e in results(server.requests[1])] == ["TOOL_NOT_FOUND", None]
    assert "ikigai: ← edge__write TOOL_NOT_FOUND" in ran.stderr

    model([write])
    ask(tmp_path, "--tools", "edge__write", "--yes")
    assert marker.exists()
